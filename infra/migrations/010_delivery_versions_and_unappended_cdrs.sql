-- Which version of a session a delivery row holds: the Session's last_updated (mod_sessions.asciidoc,
-- Session Object: "Timestamp when this Session was last updated"), not only the Kafka offset. A push
-- refused by an append timeout may still land later, at a higher offset than the newer push the CPO
-- sent next; by offset the older state would win. Rows without it (from before) compare by offset.
alter table deliveries add column source_time timestamptz;

-- CDRs received but not yet on Kafka (their append failed or timed out): the prober appends those the
-- CPO did not post again. The table keeps every CDR for good, so the few pending ones get an index.
create index cdrs_unappended on cdrs (created_at) where state = 'pending';
