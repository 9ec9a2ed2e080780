-- Tokens (issue 13; mod_tokens.asciidoc): eMSP-owned, pushed by eMSPs, pulled by CPOs and delivered to
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

-- Deliveries go to either role now (issue 13): a token to each routed CPO, a ClientInfo to a party of
-- either role. A row still names the pair it is about (the eMSP and the CPO of a routing rule);
-- recipient_role says which of the two receives it. Claims are per recipient (one slow CPO takes no
-- slot of another), through the recipient's columns, which the database derives so no writer can
-- disagree with them.
alter table deliveries drop constraint deliveries_kind_check;
alter table deliveries add constraint deliveries_kind_check check (kind in ('session', 'cdr', 'command_result', 'token', 'client_info'));
alter table deliveries add column recipient_role text not null default 'EMSP' check (recipient_role in ('EMSP', 'CPO'));
alter table deliveries add column recipient_country_code text generated always as (case when recipient_role = 'CPO' then cpo_country_code else emsp_country_code end) stored;
alter table deliveries add column recipient_party_id text generated always as (case when recipient_role = 'CPO' then cpo_party_id else emsp_party_id end) stored;
create index deliveries_pending_recipient on deliveries (recipient_country_code, recipient_party_id, next_attempt_at, id) where state = 'pending';
drop index deliveries_pending_emsp;
