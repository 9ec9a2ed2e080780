-- Partner health with hysteresis (docs/decisions/0005-partner-health-hysteresis.md): the failed and
-- the good probes in a row, so a status changes only after PROBE_OFFLINE_AFTER failures or
-- PROBE_ONLINE_AFTER successes. Adding columns with a constant default rewrites nothing.
alter table platform_health add column consecutive_failures integer not null default 0;
alter table platform_health add column consecutive_successes integer not null default 0;
