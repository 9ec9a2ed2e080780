-- Location and tariff ids are CiStrings (OCPI 2.2.1 types.asciidoc, CiString: case-insensitive):
-- rows are keyed by the upper-cased id, as country_code and party_id already are; the document keeps
-- the id as the CPO sent it. Two rows whose ids differ only in case would be one object: this
-- migration then fails on the primary key, and an operator must choose which to keep.
update locations set id = upper(id) where id <> upper(id);
update tariffs set id = upper(id) where id <> upper(id);
