-- migrate: no-transaction
-- The delivery claim index by recipient party (tokens go to CPOs, everything else to eMSPs): the same
-- expressions as the claim query (postgres-delivery-queue.ts) and the backlog, so the planner uses
-- it. Built CONCURRENTLY (docs/decisions/0004-migrations-for-big-tables.md): the deliveries table
-- of a running hub holds millions of rows, and a plain CREATE INDEX would block every enqueue and
-- claim for the whole build. A hub that applied 018_tokens.sql before this file existed has the
-- index already (if not exists). If a build fails, Postgres leaves an invalid index behind: drop it
-- (drop index concurrently deliveries_pending_recipient) and run the migrations again.
create index concurrently if not exists deliveries_pending_recipient on deliveries (
  (case when recipient_role = 'CPO' then cpo_country_code else emsp_country_code end),
  (case when recipient_role = 'CPO' then cpo_party_id else emsp_party_id end),
  next_attempt_at, id) where state = 'pending';
-- The eMSP-only claim index it replaces (005_deliveries_claim_index.sql).
drop index concurrently if exists deliveries_pending_emsp;
