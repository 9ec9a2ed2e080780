import type { PartyRef } from '@hub/ocpi';
import { REJECTING_LOCATION, SILENT_LOCATION } from './rules.ts';

// The OCPI 2.2.1 objects of the sandbox counterparts: the sandbox CPO's locations and tariff, its
// sessions and CDRs, and the sandbox eMSP's tokens. Every builder gives an object valid against the
// hub's schemas (schemas/ocpi; tested in packages/sandbox/test).

import type { Json } from './platform.ts';

export const TARIFF_ID = 'SBX-TARIFF-1';
/** mod_tariffs.asciidoc, PriceComponent: price excl. VAT per kWh (ENERGY) and per session (FLAT). */
export const TARIFF_PRICES = { energyPerKwh: 0.3, flat: 0.5, vatPercent: 21 } as const;

function connector(id: string, lastUpdated: string): Json {
  return { id, standard: 'IEC_62196_T2', format: 'SOCKET', power_type: 'AC_3_PHASE', max_voltage: 230, max_amperage: 32, max_electric_power: 22_000, tariff_ids: [TARIFF_ID], last_updated: lastUpdated };
}

function evse(uid: string, evseId: string, lastUpdated: string): Json {
  return { uid, evse_id: evseId, status: 'AVAILABLE', capabilities: ['REMOTE_START_STOP_CAPABLE', 'RESERVABLE', 'UNLOCK_CAPABLE'], connectors: [connector('1', lastUpdated)], last_updated: lastUpdated };
}

/** The EVSE uids of a sandbox location, for status PATCHes and sessions. */
export function evseUids(locationId: string): string[] {
  return locationId === 'SBX-LOC-1' ? ['SBX-EVSE-1', 'SBX-EVSE-2'] : [`${locationId}-EVSE`];
}

/** Three locations: one to charge at, one where every command is rejected, one where no result comes. */
export function sandboxLocations(cpo: PartyRef, now: string): Json[] {
  const evseIdPrefix = `${cpo.countryCode}*${cpo.partyId}*E`;
  const base = (id: string, name: string, evses: Json[]): Json => ({
    country_code: cpo.countryCode,
    party_id: cpo.partyId,
    id,
    publish: true,
    name,
    address: 'Sandboxstraat 1',
    city: 'Utrecht',
    postal_code: '3511 AA',
    country: 'NLD',
    coordinates: { latitude: '52.090737', longitude: '5.121420' },
    parking_type: 'ON_STREET',
    evses,
    time_zone: 'Europe/Amsterdam',
    last_updated: now,
  });
  return [
    base('SBX-LOC-1', 'Sandbox charging location', evseUids('SBX-LOC-1').map((uid, i) => evse(uid, `${evseIdPrefix}SBX${i + 1}`, now))),
    base(REJECTING_LOCATION, 'Sandbox: commands rejected here', [evse(`${REJECTING_LOCATION}-EVSE`, `${evseIdPrefix}SBXR`, now)]),
    base(SILENT_LOCATION, 'Sandbox: command results never come', [evse(`${SILENT_LOCATION}-EVSE`, `${evseIdPrefix}SBXT`, now)]),
  ];
}

export function sandboxTariff(cpo: PartyRef, now: string): Json {
  const { energyPerKwh, flat, vatPercent } = TARIFF_PRICES;
  return {
    country_code: cpo.countryCode,
    party_id: cpo.partyId,
    id: TARIFF_ID,
    currency: 'EUR',
    type: 'REGULAR',
    tariff_alt_text: [{ language: 'en', text: `${energyPerKwh.toFixed(2)} EUR/kWh and ${flat.toFixed(2)} EUR per session, excl. ${vatPercent}% VAT` }],
    elements: [
      {
        price_components: [
          { type: 'FLAT', price: flat, vat: vatPercent, step_size: 1 },
          { type: 'ENERGY', price: energyPerKwh, vat: vatPercent, step_size: 1 },
        ],
      },
    ],
    last_updated: now,
  };
}

const round4 = (n: number) => Math.round(n * 10_000) / 10_000;

/** mod_tariffs.asciidoc: the cost of a session of `kwh` under the sandbox tariff, excl. and incl. VAT. */
export function tariffCost(kwh: number): { energy: { excl_vat: number; incl_vat: number }; fixed: { excl_vat: number; incl_vat: number }; total: { excl_vat: number; incl_vat: number } } {
  const { energyPerKwh, flat, vatPercent } = TARIFF_PRICES;
  const vat = 1 + vatPercent / 100;
  const energy = round4(kwh * energyPerKwh);
  return {
    energy: { excl_vat: energy, incl_vat: round4(energy * vat) },
    fixed: { excl_vat: flat, incl_vat: round4(flat * vat) },
    total: { excl_vat: round4(energy + flat), incl_vat: round4((energy + flat) * vat) },
  };
}

/** A session of the sandbox CPO as it stands (mod_sessions.asciidoc, Session Object). */
export interface SessionState {
  readonly id: string;
  readonly cpo: PartyRef;
  /** The Token of the START_SESSION, whose eMSP receives the session and the CDR. */
  readonly token: Json;
  readonly locationId: string;
  readonly evseUid: string;
  readonly connectorId: string;
  readonly authorizationReference: string | undefined;
  readonly startedAt: string;
  status: 'PENDING' | 'ACTIVE' | 'COMPLETED';
  kwh: number;
  endedAt: string | undefined;
  lastUpdated: string;
}

export function cdrToken(token: Json): Json {
  return { country_code: token['country_code'], party_id: token['party_id'], uid: token['uid'], type: token['type'], contract_id: token['contract_id'] };
}

export function sessionObject(s: SessionState): Json {
  const cost = tariffCost(s.kwh);
  return {
    country_code: s.cpo.countryCode,
    party_id: s.cpo.partyId,
    id: s.id,
    start_date_time: s.startedAt,
    ...(s.endedAt ? { end_date_time: s.endedAt } : {}),
    kwh: round4(s.kwh),
    cdr_token: cdrToken(s.token),
    auth_method: 'COMMAND',
    ...(s.authorizationReference ? { authorization_reference: s.authorizationReference } : {}),
    location_id: s.locationId,
    evse_uid: s.evseUid,
    connector_id: s.connectorId,
    currency: 'EUR',
    total_cost: cost.total,
    status: s.status,
    last_updated: s.lastUpdated,
  };
}

/** mod_cdrs.asciidoc, CDR Object: one charging period with the energy and time, totals by the tariff. */
export function cdrObject(s: SessionState, location: Json, tariff: Json, now: string): Json {
  const end = s.endedAt ?? now;
  const hours = Math.max(0, (Date.parse(end) - Date.parse(s.startedAt)) / 3_600_000);
  const cost = tariffCost(s.kwh);
  const evse = (location['evses'] as Json[] | undefined)?.find((e) => e['uid'] === s.evseUid) ?? {};
  const conn = (evse['connectors'] as Json[] | undefined)?.[0] ?? {};
  return {
    country_code: s.cpo.countryCode,
    party_id: s.cpo.partyId,
    id: `CDR-${s.id}`,
    start_date_time: s.startedAt,
    end_date_time: end,
    session_id: s.id,
    cdr_token: cdrToken(s.token),
    auth_method: 'COMMAND',
    ...(s.authorizationReference ? { authorization_reference: s.authorizationReference } : {}),
    cdr_location: {
      id: location['id'],
      name: location['name'],
      address: location['address'],
      city: location['city'],
      postal_code: location['postal_code'],
      country: location['country'],
      coordinates: location['coordinates'],
      evse_uid: s.evseUid,
      evse_id: evse['evse_id'],
      connector_id: s.connectorId,
      connector_standard: conn['standard'],
      connector_format: conn['format'],
      connector_power_type: conn['power_type'],
    },
    currency: 'EUR',
    tariffs: [tariff],
    charging_periods: [
      {
        start_date_time: s.startedAt,
        dimensions: [
          { type: 'ENERGY', volume: round4(s.kwh) },
          { type: 'TIME', volume: round4(hours) },
        ],
        tariff_id: tariff['id'],
      },
    ],
    total_cost: cost.total,
    total_fixed_cost: cost.fixed,
    total_energy: round4(s.kwh),
    total_energy_cost: cost.energy,
    total_time: round4(hours),
    last_updated: now,
  };
}

/** The sandbox eMSP's tokens: one per token rule, so a CPO can ask for each outcome (docs/reference/sandbox.md). */
export const SANDBOX_TOKEN_UIDS = ['ALLOWED0001', 'BLOCKED0001', 'EXPIRED0001', 'NOCREDIT0001', 'NOTALLOWED0001', 'UNKNOWN0001', 'TIMEOUT0001'] as const;

export function sandboxToken(emsp: PartyRef, uid: string, now: string): Json {
  return {
    country_code: emsp.countryCode,
    party_id: emsp.partyId,
    uid,
    type: 'RFID',
    contract_id: `${emsp.countryCode}-${emsp.partyId}-C${uid}`,
    visual_number: uid,
    issuer: 'Sandbox eMSP',
    valid: true,
    // mod_tokens.asciidoc, WhitelistType NEVER: the CPO must ask for real-time authorization.
    whitelist: 'NEVER',
    language: 'en',
    last_updated: now,
  };
}
