-- CDR ids are CiStrings (OCPI 2.2.1 types.asciidoc): `cdr-1` and `CDR-1` of one CPO are one CDR, and
-- CDRs are immutable (mod_cdrs.asciidoc), so the second is a conflict, not a second CDR. (Their Kafka
-- key is upper-cased already.) Fails if such a pair exists: an operator must decide which is the CDR.
create unique index cdrs_case_insensitive_id on cdrs (country_code, party_id, upper(id));
