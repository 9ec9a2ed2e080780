// Pieces shared by several 2.1.1 objects: EnergyMix, Hours, ChargingPeriod and the time zone rule.
import type { ChargingPeriod, EnergyMix, Hours } from '../canonical.ts';
import { compact } from '../version-fields.ts';
import type * as W from './types.ts';

/** mod_locations.md 4.8: the impact's category is named source in 2.1.1, category in 2.2.1 (mod_locations.asciidoc 8.4.10); a rename. */
export function energyMixIn(mix: W.EnergyMix): EnergyMix {
  const { environ_impact, ...rest } = mix;
  return compact({ ...rest, environ_impact: environ_impact?.map(({ source, amount }) => ({ category: source, amount })) });
}

export function energyMixOut(mix: EnergyMix): W.EnergyMix {
  const { environ_impact, ...rest } = mix;
  return compact({ ...rest, environ_impact: environ_impact?.map(({ category, amount }) => ({ source: category, amount })) });
}

/**
 * mod_locations.md 4.13: Hours is a choice of regular_hours or twentyfourseven; 2.2.1 requires
 * twentyfourseven (mod_locations.asciidoc 8.4.14). Without it the hours are regular ones: false, and
 * the caller records the path as derived so the 2.1.1 serializer leaves it out again.
 */
export function hoursIn(hours: W.Hours): { hours: Hours; derived: boolean } {
  const { twentyfourseven, ...rest } = hours;
  return { hours: compact({ twentyfourseven: twentyfourseven ?? false, ...rest }), derived: twentyfourseven === undefined };
}

export function hoursOut(hours: Hours, derived: boolean): W.Hours {
  const { twentyfourseven, ...rest } = hours;
  return derived ? rest : compact({ ...rest, twentyfourseven });
}

type Dimension211 = W.ChargingPeriod['dimensions'][number]['type'];
const DIMENSIONS_211: ReadonlySet<string> = new Set<Dimension211>(['ENERGY', 'FLAT', 'MAX_CURRENT', 'MIN_CURRENT', 'PARKING_TIME', 'TIME']);

/**
 * mod_cdrs.md 4.3: 2.1.1 has a FLAT dimension, 2.2.1 none (mod_cdrs.asciidoc 10.4.3). The canonical
 * periods leave FLAT out (a period left without dimensions is left out) and `lossy` says so: the caller
 * keeps the periods as sent in the reserved member.
 */
export function chargingPeriodsIn(periods: readonly W.ChargingPeriod[]): { periods: ChargingPeriod[]; lossy: boolean } {
  let lossy = false;
  const out: ChargingPeriod[] = [];
  for (const period of periods) {
    const dimensions = period.dimensions.filter((d) => d.type !== 'FLAT') as ChargingPeriod['dimensions'];
    if (dimensions.length !== period.dimensions.length) lossy = true;
    if (dimensions.length > 0) out.push({ start_date_time: period.start_date_time, dimensions });
  }
  return { periods: out, lossy };
}

/**
 * 2.2.1 dimensions 2.1.1 has no value for (CURRENT, ENERGY_EXPORT, ENERGY_IMPORT, MAX_POWER, MIN_POWER,
 * POWER, RESERVATION_TIME, STATE_OF_CHARGE) are left out, a period left without dimensions too, and
 * tariff_id (2.2.1 only) is dropped.
 */
export function chargingPeriodsOut(periods: readonly ChargingPeriod[]): W.ChargingPeriod[] {
  const out: W.ChargingPeriod[] = [];
  for (const period of periods) {
    const dimensions = period.dimensions.filter((d) => DIMENSIONS_211.has(d.type)) as W.ChargingPeriod['dimensions'];
    if (dimensions.length > 0) out.push({ start_date_time: period.start_date_time, dimensions });
  }
  return out;
}

/**
 * The IANA zone of a country (ISO 3166-1 alpha-3) whose whole territory under that code keeps one
 * civil time. Countries with several (ESP: Canary Islands, PRT: Azores, most outside Europe) are not
 * listed: their locations need the time_zone the CPO sends (mod_locations.md 3.1 has it, optional).
 */
const SINGLE_ZONE: Readonly<Record<string, string>> = {
  AUT: 'Europe/Vienna', BEL: 'Europe/Brussels', BGR: 'Europe/Sofia', CHE: 'Europe/Zurich', CZE: 'Europe/Prague',
  DEU: 'Europe/Berlin', DNK: 'Europe/Copenhagen', EST: 'Europe/Tallinn', FIN: 'Europe/Helsinki', FRA: 'Europe/Paris',
  GBR: 'Europe/London', GRC: 'Europe/Athens', HRV: 'Europe/Zagreb', HUN: 'Europe/Budapest', IRL: 'Europe/Dublin',
  ISL: 'Atlantic/Reykjavik', ITA: 'Europe/Rome', LIE: 'Europe/Vaduz', LTU: 'Europe/Vilnius', LUX: 'Europe/Luxembourg',
  LVA: 'Europe/Riga', MLT: 'Europe/Malta', NLD: 'Europe/Amsterdam', NOR: 'Europe/Oslo', POL: 'Europe/Warsaw',
  ROU: 'Europe/Bucharest', SVK: 'Europe/Bratislava', SVN: 'Europe/Ljubljana', SWE: 'Europe/Stockholm',
};

/** The zone used when the sender has none to give: the country's only zone, else UTC (a derived, lossy value). */
export function derivedTimeZone(country: string): string {
  return SINGLE_ZONE[country] ?? 'UTC';
}
