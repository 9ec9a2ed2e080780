-- migrate: no-transaction
-- A 2.1.1 CPO names a session's or CDR's driver only by auth_id, the token's contract_id in the
-- canonical form (docs/reference/version-mapping.md): the hub finds the token, and so the eMSP, by it.
-- contract_id is a CiString (types.asciidoc): compared upper-cased. Built CONCURRENTLY
-- (docs/decisions/0004-migrations-for-big-tables.md); a failed build leaves an invalid index: drop it
-- (drop index concurrently tokens_contract_id) and run the migrations again.
create index concurrently if not exists tokens_contract_id on tokens (generation, (upper(document->>'contract_id')));
