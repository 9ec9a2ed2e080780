// Sessions, CDRs and the Tariffs inside them, between OCPI 2.3.0 and the canonical 2.2.1 form: each
// Price by the rule of prices.ts (ocpi-2.3.0/types.asciidoc Price class), a tax-inclusive Tariff by
// mod_tariffs.asciidoc PriceComponent (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md).
import type { Cdr, Session, Tariff } from '../canonical.ts';
import { withoutVersionFields } from '../version-fields.ts';
import { CDR_221, keptOf, KNOWN_221, restore, SESSION_221, split, strip, TARIFF_221, withFields, type Rec } from './members.ts';
import { PRICES_INCLUDE_UNKNOWN_TAXES, priceIn, priceLimitIn, priceLimitOut, priceOut, type Price221, type Price230, type PriceLimit230, type TaxAmount } from './prices.ts';

/** The CDR's Price members (mod_cdrs.asciidoc CDR object); a Session has total_cost only. */
const CDR_PRICES = ['total_cost', 'total_fixed_cost', 'total_energy_cost', 'total_time_cost', 'total_parking_cost', 'total_reservation_cost'] as const;

/** Where a CDR keeps the 2.3.0 Tariffs withheld from its canonical form (cdrIn; no member name has a space). */
const WITHHELD_TARIFFS = 'tariffs withheld';

/** A 2.3.0 Price list taxes are kept under "<member>.taxes" (prices.ts). */
export function pricesIn(object: Rec, members: readonly string[], kept: Rec): void {
  for (const member of members) {
    const price = object[member] as Price230 | null | undefined;
    if (price === undefined) continue;
    if (price === null) { kept[`${member}.taxes`] = null; continue; }
    object[member] = priceIn(price);
    kept[`${member}.taxes`] = price.taxes ?? null;
  }
}

export function pricesOut(object: Rec, members: readonly string[], kept: Readonly<Rec> | undefined): void {
  for (const member of members) {
    const price = object[member] as Price221 | null | undefined;
    if (price) object[member] = priceOut(price, kept?.[`${member}.taxes`] as TaxAmount[] | undefined);
  }
}

/** A 2.3.0 Tariff: min/max PriceLimit as 2.2.1 Prices; tax_included and extensions kept. */
export function tariffInto(wire: Rec, kept: Rec, prefix: string, derived: Record<string, true> = {}): Tariff {
  const tariff = split(wire, TARIFF_221, kept, prefix);
  for (const limit of ['min_price', 'max_price']) if (tariff[limit]) tariff[limit] = priceLimitIn(tariff[limit] as PriceLimit230);
  if (wire['tax_included'] === 'YES') {
    const elements = tariff['elements'] as Array<{ price_components: Array<{ price: number; vat?: number }> }>;
    const components = elements.flatMap((e) => e.price_components);
    kept[`${prefix}elements`] = elements;
    // mod_tariffs.asciidoc PriceComponent: price incl. taxes; vat the percentage to take off for 2.2.1's excl. VAT price.
    if (components.every((c) => c.vat !== undefined)) tariff['elements'] = elements.map((e) => ({ ...e, price_components: e.price_components.map((c) => ({ ...c, price: Math.round((c.price / (1 + (c.vat ?? 0) / 100)) * 10_000) / 10_000 })) }));
    else derived[PRICES_INCLUDE_UNKNOWN_TAXES] = true;
  }
  return tariff as unknown as Tariff;
}

export function tariffOutOf(tariff: Tariff, kept: Readonly<Rec> | undefined, prefix: string): Rec {
  const out = restore({ ...strip(tariff) }, kept, prefix);
  for (const limit of ['min_price', 'max_price']) if (out[limit]) out[limit] = priceLimitOut(out[limit] as Price221);
  // mod_tariffs.asciidoc Tariff object: tax_included is required in 2.3.0; a 2.2.1 Tariff's prices are
  // excl. VAT (mod_tariffs.asciidoc 11.4.2 PriceComponent), so a Tariff that no 2.3.0 party sent says NO.
  out['tax_included'] ??= 'NO';
  return out;
}

/**
 * A cdr_token whose type 2.2.1 has no value for (ocpi-2.3.0/mod_tokens.asciidoc TokenType, an OpenEnum:
 * EMAID, the contract certificate of ISO 15118 Plug & Charge): the canonical CdrToken needs one of
 * 2.2.1's, and OTHER is its value for any other kind of token; the token as sent is kept for 2.3.0
 * readers. A PATCH's other cdr_token removes a kept one (null: mergeVersionFields drops it, restore
 * leaves the PATCH's own).
 */
export function cdrTokenIn(object: Rec, kept: Rec, patch: boolean): void {
  const token = object['cdr_token'];
  if (token === undefined) return;
  const type = token !== null && typeof token === 'object' ? (token as Rec)['type'] : undefined;
  if (typeof type === 'string' && !KNOWN_221['TokenType']?.has(type)) {
    kept['cdr_token'] = token;
    object['cdr_token'] = { ...(token as Rec), type: 'OTHER' };
  } else if (patch) kept['cdr_token'] = null;
}

export function sessionIn(wire: unknown): Session {
  const kept: Rec = {};
  const session = split(wire as Rec, SESSION_221, kept, '');
  pricesIn(session, ['total_cost'], kept);
  cdrTokenIn(session, kept, false);
  return withFields(session as unknown as Session, compactKept(kept));
}

export function sessionOut(session: Session): Rec {
  const kept = keptOf(session);
  const out = restore({ ...strip(session) }, kept, '');
  pricesOut(out, ['total_cost'], kept);
  return out;
}

/** 2.2.1's longest SignedValue plain_data (mod_cdrs.asciidoc SignedValue class: string(512)); 2.3.0 allows 5000. */
const PLAIN_DATA_221 = 512;

export function cdrIn(wire: unknown): Cdr {
  const kept: Rec = {};
  const cdr = split(wire as Rec, CDR_221, kept, '');
  pricesIn(cdr, CDR_PRICES, kept);
  cdrTokenIn(cdr, kept, false);
  // Signed meter data longer than 2.2.1 holds (an OCMF plain_data is often over 512 characters) is
  // kept whole for 2.3.0 readers and left out of the canonical CDR, where signed_data is optional
  // (mod_cdrs.asciidoc CDR object): the CDR reaches 2.2.1 and 2.1.1 eMSPs without it, not refused.
  const signed = cdr['signed_data'] as { signed_values?: Array<{ plain_data?: unknown }> } | undefined;
  if (signed?.signed_values?.some((v) => typeof v.plain_data === 'string' && v.plain_data.length > PLAIN_DATA_221)) {
    kept['signed_data'] = signed;
    delete cdr['signed_data'];
  }
  if (Array.isArray(cdr['tariffs'])) {
    // A Tariff whose prices include taxes at a rate it does not give (tax_included YES, no vat) has no
    // 2.2.1 excl. VAT price to write (pricesExcludeTaxes): it is withheld from the canonical CDR, whose
    // tariffs are optional (mod_cdrs.asciidoc CDR object), and kept whole for 2.3.0 readers
    // (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md).
    const tariffs: Tariff[] = [];
    const withheld: Rec[] = [];
    for (const wire of cdr['tariffs'] as Rec[]) {
      const own: Rec = {};
      const derived: Record<string, true> = {};
      const tariff = tariffInto(wire, own, `tariffs.${String(wire['id'])}.`, derived);
      if (derived[PRICES_INCLUDE_UNKNOWN_TAXES]) withheld.push(withoutVersionFields(wire));
      else {
        tariffs.push(tariff);
        Object.assign(kept, own);
      }
    }
    if (withheld.length > 0) kept[WITHHELD_TARIFFS] = withheld;
    if (tariffs.length > 0) cdr['tariffs'] = tariffs;
    else delete cdr['tariffs'];
  }
  return withFields(cdr as unknown as Cdr, compactKept(kept));
}


export function cdrOut(cdr: Cdr): Rec {
  const kept = keptOf(cdr);
  const out = restore({ ...strip(cdr) }, kept, '');
  pricesOut(out, CDR_PRICES, kept);
  const withheld = (kept?.[WITHHELD_TARIFFS] as Rec[] | undefined) ?? [];
  delete out[WITHHELD_TARIFFS];
  const tariffs = [...(cdr.tariffs ?? []).map((t) => tariffOutOf(t, kept, `tariffs.${t.id}.`)), ...withheld];
  if (tariffs.length > 0) out['tariffs'] = tariffs;
  return out;
}

/** A null kept member (a price sent without taxes) is only a removal in a PATCH: left out of a full object. */
export function compactKept(kept: Rec): Rec {
  for (const [name, value] of Object.entries(kept)) if (value === null) delete kept[name];
  return kept;
}
