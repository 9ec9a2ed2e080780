-- When the latest append of a received CDR began (docs/decisions/0003-each-cdr-once.md): a CDR is
-- appended again (a CPO retry, the prober's relay) only after its previous append has settled and its
-- partition was searched for it, so each CDR is in ocpi.cdrs.v1 once. Rows already there count as
-- attempted now: a pending one waits one settle window more before the relay takes it.
alter table cdrs add column append_started_at timestamptz not null default now();
