-- Data keys of drivers' tokens (docs/decisions/0013-erasure-by-destroying-data-keys.md): the personal
-- fields of a token and of the cdr_token of its sessions and CDRs are sealed in events under the
-- token's own data key; deleting the row erases them from every immutable topic. token_ref is an
-- HMAC of the token (eMSP country code, party id, uid, type) under a key derived from HUB_SECRET_KEY,
-- so the table holds no plain uid; key_id is random (events name it, it names nothing else);
-- wrapped_key is the data key sealed (AES-256-GCM) under the key-encryption key derived from
-- HUB_SECRET_KEY. A small table (one row per token), created empty: no big-table concerns.
create table driver_data_keys (
  token_ref bytea primary key,
  key_id uuid not null unique,
  wrapped_key bytea not null,
  created_at timestamptz not null default now()
);
