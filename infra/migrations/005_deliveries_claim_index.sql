-- Claiming walks the due records eMSP by eMSP (a slot budget per eMSP keeps one eMSP's backlog from
-- taking the others' slots): this index serves both the list of eMSPs with due records and each
-- eMSP's oldest due records.
create index deliveries_pending_emsp on deliveries (emsp_country_code, emsp_party_id, next_attempt_at, id) where state = 'pending';
