-- The OCPI versions a platform may use (the operator's choice, hubctl party register --versions) next to
-- the one it chose in its last credentials exchange (platforms.version). Existing platforms keep exactly
-- what they had: 2.2.1 only (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md).
alter table platforms add column versions text[] not null default array['2.2.1']::text[];
