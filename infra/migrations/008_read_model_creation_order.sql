-- Pages are ordered by when an object was created, not by last_updated (transport_and_format.asciidoc,
-- Paginated Response: "the sequence of objects mustn't change, or as little as possible ... order the
-- objects by creation date ascending"). Ordered by last_updated, every status PATCH moved its location
-- to the end of the list, shifting the rows after it back by one while an eMSP paged through: a row at
-- the next page boundary was never returned. created_at is the time of the event that created the
-- object, so a replay of the topic gives the same order. Rows projected before this migration take
-- their last_updated, the CPO's clock; `hubctl readmodel rebuild` afterwards gives them the times of
-- their creating events, as a replay would.
--
-- The last_updated index (locations_page) stays for date_from/date_to: without it a filtered page
-- reads every row's last_updated, which grows with the table (40 ms at 50,000 locations). Keeping it
-- costs a PATCH one more index entry (no HOT update is possible while last_updated is indexed).
alter table locations add column created_at timestamptz;
update locations set created_at = last_updated;
alter table locations alter column created_at set not null;
create index locations_created on locations (generation, created_at, country_code, party_id, id) include (last_updated);

alter table tariffs add column created_at timestamptz;
update tariffs set created_at = last_updated;
alter table tariffs alter column created_at set not null;
create index tariffs_created on tariffs (generation, created_at, country_code, party_id, id) include (last_updated);
