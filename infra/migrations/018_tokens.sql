-- Tokens (mod_tokens.asciidoc): eMSP-owned, pushed by eMSPs, pulled by CPOs and delivered to
-- them. The read model is shaped like the other two (generation, key, created_at for the page order,
-- last_updated for date filters, counts per owner). A token's id here is "uid|TYPE": a uid is unique
-- per type only (mod_tokens.asciidoc, Token object), and a type never holds '|', so the last '|' splits
-- it back (modules.ts, tokenObjectId).
alter table read_model_generations drop constraint read_model_generations_model_check;
alter table read_model_generations add constraint read_model_generations_model_check check (model in ('locations', 'tariffs', 'tokens'));
insert into read_model_generations (model, active) values ('tokens', 1);

create table tokens (
  generation integer not null,
  country_code text not null,
  party_id text not null,
  id text not null,
  last_updated timestamptz not null,
  created_at timestamptz not null,
  document json not null,
  primary key (generation, country_code, party_id, id)
);
create index tokens_created on tokens (generation, created_at, country_code, party_id, id) include (last_updated);
create index tokens_changed on tokens (generation, last_updated, country_code, party_id, id) include (created_at);
alter table tokens set (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.01);

create trigger tokens_count_insert after insert on tokens referencing new table as added
  for each statement execute function read_model_counts_add('tokens');
create trigger tokens_count_delete after delete on tokens referencing old table as removed
  for each statement execute function read_model_counts_remove('tokens');
create trigger tokens_count_move after update of generation, country_code, party_id on tokens
  for each row execute function read_model_counts_move('tokens');
create trigger tokens_count_truncate after truncate on tokens
  for each statement execute function read_model_counts_clear('tokens');

-- Deliveries go to either role now: a token to each routed CPO, a ClientInfo to a party of
-- either role. A row still names the pair it is about (the eMSP and the CPO of a routing rule);
-- recipient_role says which of the two receives it, and from_hub that the hub itself is the sender
-- (transport_and_format.asciidoc, Broadcast Push: the hub sends with its own OCPI-from). Claims are per
-- recipient (one slow CPO takes no slot of another) through an expression index on the recipient's
-- party. The deliveries table keeps every CDR and session ever received, so nothing here rewrites it:
-- columns with a constant default are catalogue-only, the checks are added NOT VALID and validated
-- with a scan (no rewrite), and the new index covers pending rows only.
alter table deliveries drop constraint deliveries_kind_check;
alter table deliveries add constraint deliveries_kind_check check (kind in ('session', 'cdr', 'command_result', 'token', 'client_info')) not valid;
alter table deliveries validate constraint deliveries_kind_check;
alter table deliveries add column recipient_role text not null default 'EMSP';
alter table deliveries add constraint deliveries_recipient_role_check check (recipient_role in ('EMSP', 'CPO')) not valid;
alter table deliveries validate constraint deliveries_recipient_role_check;
alter table deliveries add column from_hub boolean not null default false;
-- The claim index by recipient is built by 020_deliveries_claim_index.sql, outside a transaction and
-- CONCURRENTLY, so a large deliveries table keeps taking writes while it is built.
