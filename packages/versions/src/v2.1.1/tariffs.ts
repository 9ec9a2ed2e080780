// Tariff between OCPI 2.1.1 (mod_tariffs.md 3.1) and 2.2.1 (mod_tariffs.asciidoc 11.3.1).
import type { Owner, Tariff } from '../canonical.ts';
import { NotRepresentableError } from '../errors.ts';
import { compact, nonEmpty } from '../version-fields.ts';
import { energyMixIn, energyMixOut } from './common.ts';
import type * as W from './types.ts';

/**
 * A 2.1.1 Tariff as the canonical one: country_code and party_id are the sending CPO's. Prices are
 * excl. VAT in both versions (mod_tariffs.md 4.2, mod_tariffs.asciidoc 11.4.2), so they map as they
 * are; every 2.1.1 restriction has the same name in 2.2.1.
 */
export function tariffIn(tariff: W.Tariff, owner: Owner): Tariff {
  const { energy_mix, ...same } = tariff;
  return compact({ country_code: owner.countryCode, party_id: owner.partyId, ...same, energy_mix: energy_mix && energyMixIn(energy_mix) });
}

/**
 * The canonical Tariff as 2.1.1. Dropped: country_code, party_id, type, min_price, max_price,
 * start_date_time, end_date_time, each price component's vat, and the restrictions min_current,
 * max_current. An element restricted to reservations (restrictions.reservation) prices something 2.1.1
 * has no notion of and would read as applying always: it is left out; a tariff left without elements
 * is not representable.
 */
export function tariffOut(tariff: Tariff): W.Tariff {
  const { country_code: _c, party_id: _p, type: _t, min_price: _min, max_price: _max, start_date_time: _s, end_date_time: _e, energy_mix, elements, ...same } = tariff;
  const kept: W.TariffElement[] = [];
  for (const element of elements) {
    if (element.restrictions?.reservation) continue;
    const price_components = nonEmpty(element.price_components.map(({ vat: _vat, ...component }) => component));
    if (!element.restrictions) {
      kept.push({ price_components });
      continue;
    }
    const { min_current: _mc, max_current: _xc, reservation: _r, ...restrictions } = element.restrictions;
    kept.push(Object.keys(restrictions).length > 0 ? { price_components, restrictions } : { price_components });
  }
  if (kept.length === 0) throw new NotRepresentableError('2.1.1', 'Tariff', `${tariff.id}: only reservation elements`);
  return compact({ ...same, elements: nonEmpty(kept), energy_mix: energy_mix && energyMixOut(energy_mix) });
}
