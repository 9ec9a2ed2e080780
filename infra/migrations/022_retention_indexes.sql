-- migrate: no-transaction
-- What retention prunes (packages/store/src/retention.ts; docs/decisions/0006-retention.md), found by
-- age without scanning the tables: each index holds only the rows that may be pruned, ordered by the
-- time their retention counts from. Built CONCURRENTLY (0004): these are the hub's largest tables.
-- Sessions, CDRs and command results once delivered (a token's or a ClientInfo's row is the version
-- its recipient holds, kept for as long as the object lives).
create index concurrently if not exists deliveries_delivered_at on deliveries (delivered_at, id)
  where state = 'delivered' and kind in ('session', 'cdr', 'command_result');
-- Commands no longer waiting for a result.
create index concurrently if not exists commands_finished_at on commands (updated_at, id) where state <> 'accepted';
-- Quarantined records an operator resolved.
create index concurrently if not exists consumer_quarantine_resolved_at on consumer_quarantine (resolved_at, id)
  where state in ('redriven', 'superseded', 'discarded');
create index concurrently if not exists projection_rejects_at on projection_rejects (at);
create index concurrently if not exists rate_limit_windows_start on rate_limit_windows (window_start);
-- Pruning deletes about a day's rows every day: vacuum these tables after 2% of their rows are dead
-- (Postgres's default is 20%), so the space is reused and the tables' size levels off with the rows.
alter table deliveries set (autovacuum_vacuum_scale_factor = 0.02);
alter table commands set (autovacuum_vacuum_scale_factor = 0.02);
alter table projection_rejects set (autovacuum_vacuum_scale_factor = 0.02);
