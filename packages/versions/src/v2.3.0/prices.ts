// Prices between OCPI 2.3.0 (types.asciidoc Price class: before_taxes + taxes[]; mod_tariffs.asciidoc
// PriceLimit class) and the canonical 2.2.1 Price (excl_vat, incl_vat). The rule, written down in
// docs/reference/version-mapping.md (OCPI 2.3.0, Prices and taxes):
//   in:  excl_vat = before_taxes; incl_vat = before_taxes + the sum of every tax amount (a 2.2.1 reader
//        pays what a 2.3.0 reader pays in total), absent when the 2.3.0 Price has no taxes list (nothing
//        known about taxes, so nothing is invented). The list itself is kept for 2.3.0 readers.
//   out: before_taxes = excl_vat; the kept list when the canonical amounts are still the ones it was
//        derived from, else one tax named "VAT" whose amount is incl_vat - excl_vat (no percentage:
//        2.2.1 has none), else no taxes list when incl_vat is unknown.
// PriceLimit maps member for member (before_taxes <-> excl_vat, after_taxes <-> incl_vat): lossless.

export interface Price221 { excl_vat: number; incl_vat?: number }
export interface TaxAmount { name: string; account_number?: string; percentage?: number; amount: number }
export interface Price230 { before_taxes: number; taxes?: TaxAmount[] }
export interface PriceLimit230 { before_taxes: number; after_taxes?: number }

/** Numbers in OCPI use 4 decimals (types.asciidoc number type): a sum is rounded there, not further. */
const round4 = (n: number): number => Math.round(n * 10_000) / 10_000;

export function priceIn(price: Price230): Price221 {
  if (price.taxes === undefined) return { excl_vat: price.before_taxes };
  return { excl_vat: price.before_taxes, incl_vat: round4(price.before_taxes + price.taxes.reduce((sum, tax) => sum + tax.amount, 0)) };
}

/** keptTaxes: the list a 2.3.0 sender gave for this price, when any. */
export function priceOut(price: Price221, keptTaxes?: readonly TaxAmount[]): Price230 {
  if (keptTaxes && priceIn({ before_taxes: price.excl_vat, taxes: [...keptTaxes] }).incl_vat === price.incl_vat) return { before_taxes: price.excl_vat, taxes: [...keptTaxes] };
  if (price.incl_vat === undefined) return { before_taxes: price.excl_vat };
  return { before_taxes: price.excl_vat, taxes: [{ name: 'VAT', amount: round4(price.incl_vat - price.excl_vat) }] };
}

export const priceLimitIn = (limit: PriceLimit230): Price221 => (limit.after_taxes === undefined ? { excl_vat: limit.before_taxes } : { excl_vat: limit.before_taxes, incl_vat: limit.after_taxes });
export const priceLimitOut = (price: Price221): PriceLimit230 => (price.incl_vat === undefined ? { before_taxes: price.excl_vat } : { before_taxes: price.excl_vat, after_taxes: price.incl_vat });

/** The hub_version_fields['2.3.0'] derived flag of a Tariff whose prices include taxes at a rate it does not give. */
export const PRICES_INCLUDE_UNKNOWN_TAXES = 'elements.price_components.price';

interface PricedTariff { id: string; hub_version_fields?: { '2.3.0'?: { derived?: Readonly<Record<string, true | null>> } } }

/**
 * mod_tariffs.asciidoc PriceComponent (2.3.0): with tax_included YES a price includes taxes; 2.2.1 and
 * 2.1.1 prices exclude VAT (mod_tariffs.asciidoc 11.4.2, mod_tariffs.md 4.2). Where the 2.3.0 Tariff
 * gave no vat to take off (a North American tariff), no excl. price can be written without inventing
 * one: the Tariff is not for older readers.
 */
export function pricesExcludeTaxes(tariff: object): boolean {
  return (tariff as PricedTariff).hub_version_fields?.['2.3.0']?.derived?.[PRICES_INCLUDE_UNKNOWN_TAXES] !== true;
}
