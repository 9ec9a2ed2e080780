-- Whether a tariff's prices exclude taxes: false only for an OCPI 2.3.0 tariff whose prices include
-- taxes at a rate it does not give (tax_included YES, a price component without vat:
-- ocpi-2.3.0/mod_tariffs.asciidoc PriceComponent), which the 2.3.0 adapter marks in
-- hub_version_fields."2.3.0".derived (packages/versions/src/v2.3.0/prices.ts, pricesExcludeTaxes).
-- 2.2.1 and 2.1.1 prices exclude VAT, so such a tariff is left out of their pulls; the list filters on
-- this column and subtracts the few left out from the per-owner counts (migration 016) through the
-- partial index (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md). A generated
-- column: every writer of the table (projector, rebuilds) sets it without knowing it exists.
alter table tariffs add column prices_exclude_taxes boolean not null
  generated always as (coalesce(document #>> '{hub_version_fields,2.3.0,derived,elements.price_components.price}', '') <> 'true') stored;
create index tariffs_prices_include_taxes on tariffs (generation, country_code, party_id) where not prices_exclude_taxes;
