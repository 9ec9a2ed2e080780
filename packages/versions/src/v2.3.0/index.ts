// The OCPI 2.3.0 adapter (v2.3.0-ed2). 2.3.0 is 2.2.1 plus fields, a Price with a taxes list, a Tariff
// that says whether its prices include taxes, open enums and tolerated unknown fields
// (/work/shared/ocpi-2.3.0/changelog.asciidoc, "Changes between 2.2.1-d2 and 2.3.0"). What the
// canonical 2.2.1 object has no field or value for is kept in hub_version_fields['2.3.0'] and given
// back to 2.3.0 readers; the table is docs/reference/version-mapping.md (OCPI 2.3.0).
// Nested objects (EVSE, Connector inside a Location) keep theirs in the Location's member under the
// path evses.<uid> and evses.<uid>.connectors.<id>, since serializers of other versions only remove
// the top-level member.
import { HubError } from '@hub/ocpi';
import type { VersionAdapter } from '../adapter.ts';
import type { Cdr, Connector, Credentials, Evse, Location, Owner, Role, Session, Tariff, Token, VersionDetails } from '../canonical.ts';
import { v221 } from '../v2.2.1/index.ts';
import { compact, fieldsFor, HUB_VERSION_FIELDS, withoutVersionFields, type VersionFieldsByVersion } from '../version-fields.ts';
import { PRICES_INCLUDE_UNKNOWN_TAXES, priceIn, priceLimitIn, priceLimitOut, priceOut, type Price221, type Price230, type PriceLimit230, type TaxAmount } from './prices.ts';

export * from './prices.ts';

type Rec = Record<string, unknown>;
const V = '2.3.0' as const;

/** The members of each 2.2.1 object (schemas/ocpi/*.json): any other member of a 2.3.0 object is 2.3.0-only or an extension, and is kept. */
const LOCATION_221 = new Set(['country_code', 'party_id', 'id', 'publish', 'publish_allowed_to', 'name', 'address', 'city', 'postal_code', 'state', 'country', 'coordinates', 'related_locations', 'parking_type', 'evses', 'directions', 'operator', 'suboperator', 'owner', 'facilities', 'time_zone', 'opening_times', 'charging_when_closed', 'images', 'energy_mix', 'last_updated']);
const EVSE_221 = new Set(['uid', 'evse_id', 'status', 'status_schedule', 'capabilities', 'connectors', 'floor_level', 'coordinates', 'physical_reference', 'directions', 'parking_restrictions', 'images', 'last_updated']);
const CONNECTOR_221 = new Set(['id', 'standard', 'format', 'power_type', 'max_voltage', 'max_amperage', 'max_electric_power', 'tariff_ids', 'terms_and_conditions', 'last_updated']);
const TARIFF_221 = new Set(['country_code', 'party_id', 'id', 'currency', 'type', 'tariff_alt_text', 'tariff_alt_url', 'min_price', 'max_price', 'elements', 'start_date_time', 'end_date_time', 'energy_mix', 'last_updated']);
const SESSION_221 = new Set(['country_code', 'party_id', 'id', 'start_date_time', 'end_date_time', 'kwh', 'cdr_token', 'auth_method', 'authorization_reference', 'location_id', 'evse_uid', 'connector_id', 'meter_id', 'currency', 'charging_periods', 'total_cost', 'status', 'last_updated']);
const CDR_221 = new Set(['country_code', 'party_id', 'id', 'start_date_time', 'end_date_time', 'session_id', 'cdr_token', 'auth_method', 'authorization_reference', 'cdr_location', 'meter_id', 'currency', 'tariffs', 'charging_periods', 'signed_data', 'total_cost', 'total_fixed_cost', 'total_energy', 'total_energy_cost', 'total_time', 'total_time_cost', 'total_parking_time', 'total_parking_cost', 'total_reservation_cost', 'remark', 'invoice_reference_id', 'credit', 'credit_reference_id', 'home_charging_compensation', 'last_updated']);
const TOKEN_221 = new Set(['country_code', 'party_id', 'uid', 'type', 'contract_id', 'visual_number', 'issuer', 'group_id', 'valid', 'whitelist', 'language', 'default_profile_type', 'energy_contract', 'last_updated']);

/** The 2.2.1 values of the enums 2.3.0 made open (types.asciidoc OpenEnum type). */
const KNOWN_221: Readonly<Record<string, ReadonlySet<string>>> = Object.fromEntries(Object.entries({"Facility":["HOTEL","RESTAURANT","CAFE","MALL","SUPERMARKET","SPORT","RECREATION_AREA","NATURE","MUSEUM","BIKE_SHARING","BUS_STOP","TAXI_STAND","TRAM_STOP","METRO_STATION","TRAIN_STATION","AIRPORT","PARKING_LOT","CARPOOL_PARKING","FUEL_STATION","WIFI"],"ParkingType":["ALONG_MOTORWAY","PARKING_GARAGE","PARKING_LOT","ON_DRIVEWAY","ON_STREET","UNDERGROUND_GARAGE"],"Capability":["CHARGING_PROFILE_CAPABLE","CHARGING_PREFERENCES_CAPABLE","CHIP_CARD_SUPPORT","CONTACTLESS_CARD_SUPPORT","CREDIT_CARD_PAYABLE","DEBIT_CARD_PAYABLE","PED_TERMINAL","REMOTE_START_STOP_CAPABLE","RESERVABLE","RFID_READER","START_SESSION_CONNECTOR_REQUIRED","TOKEN_GROUP_CAPABLE","UNLOCK_CAPABLE"],"ParkingRestriction":["EV_ONLY","PLUGGED","DISABLED","CUSTOMERS","MOTORCYCLES"],"ConnectorType":["CHADEMO","CHAOJI","DOMESTIC_A","DOMESTIC_B","DOMESTIC_C","DOMESTIC_D","DOMESTIC_E","DOMESTIC_F","DOMESTIC_G","DOMESTIC_H","DOMESTIC_I","DOMESTIC_J","DOMESTIC_K","DOMESTIC_L","DOMESTIC_M","DOMESTIC_N","DOMESTIC_O","GBT_AC","GBT_DC","IEC_60309_2_single_16","IEC_60309_2_three_16","IEC_60309_2_three_32","IEC_60309_2_three_64","IEC_62196_T1","IEC_62196_T1_COMBO","IEC_62196_T2","IEC_62196_T2_COMBO","IEC_62196_T3A","IEC_62196_T3C","NEMA_5_20","NEMA_6_30","NEMA_6_50","NEMA_10_30","NEMA_10_50","NEMA_14_30","NEMA_14_50","PANTOGRAPH_BOTTOM_UP","PANTOGRAPH_TOP_DOWN","TESLA_R","TESLA_S"],"TokenType":["AD_HOC_USER","APP_USER","OTHER","RFID"]}).map(([name, values]) => [name, new Set(values)]));

/** The CDR's Price members (mod_cdrs.asciidoc CDR object); a Session has total_cost only. */
const CDR_PRICES = ['total_cost', 'total_fixed_cost', 'total_energy_cost', 'total_time_cost', 'total_parking_cost', 'total_reservation_cost'] as const;

/** The members a 2.2.1 object has, and the others into kept under prefix. */
function split(object: Rec, known: ReadonlySet<string>, kept: Rec, prefix: string): Rec {
  const out: Rec = {};
  for (const [name, value] of Object.entries(object)) {
    if (known.has(name)) out[name] = value;
    else if (name !== HUB_VERSION_FIELDS) kept[prefix + name] = value;
  }
  return out;
}

/** A list of open-enum values as 2.2.1 holds it: the values it has; the list as sent is kept when it had others. */
function openListIn(object: Rec, name: string, known: ReadonlySet<string> | undefined, kept: Rec, prefix: string): void {
  const list = object[name];
  if (!Array.isArray(list) || !known) return;
  const values = list as string[];
  const inCanonical = values.filter((v) => known.has(v));
  if (inCanonical.length === values.length) return;
  kept[prefix + name] = values;
  if (inCanonical.length > 0) object[name] = inCanonical;
  else delete object[name];
}

/** One open-enum value 2.2.1 has no value for: kept, and the canonical member left out (optional ones) . */
function openValueIn(object: Rec, name: string, known: ReadonlySet<string> | undefined, kept: Rec, prefix: string, required: string | undefined): void {
  const value = object[name];
  if (typeof value !== 'string' || !known || known.has(value)) return;
  if (required) throw new HubError('INVALID_PARAMETERS', { detail: `${required}: ${value} has no value in the hub's canonical OCPI 2.2.1 form (types.asciidoc OpenEnum)` });
  kept[prefix + name] = value;
  delete object[name];
}

/** The members kept under prefix, back on the object (a 2.3.0 reader gets what the 2.3.0 sender sent). */
function restore(object: Rec, kept: Readonly<Rec> | undefined, prefix: string): Rec {
  if (!kept) return object;
  for (const [path, value] of Object.entries(kept)) {
    if (!path.startsWith(prefix)) continue;
    const name = path.slice(prefix.length);
    if (!name.includes('.')) object[name] = value;
  }
  return object;
}

const keptOf = (object: object): Readonly<Rec> | undefined => (object as { hub_version_fields?: VersionFieldsByVersion }).hub_version_fields?.[V]?.kept;
const withFields = <T extends object>(object: T, kept: Rec): T => compact({ ...object, hub_version_fields: fieldsFor(V, kept, {}) });
const strip = (object: object): Rec => v221.locationOut(object as Location) as Rec;

function connectorInto(wire: Rec, kept: Rec, prefix: string): Connector {
  const connector = split(wire, CONNECTOR_221, kept, prefix);
  openValueIn(connector, 'standard', KNOWN_221['ConnectorType'], kept, prefix, 'connector standard');
  return connector as unknown as Connector;
}

function evseInto(wire: Rec, kept: Rec, prefix: string): Evse {
  const evse = split(wire, EVSE_221, kept, prefix);
  openListIn(evse, 'capabilities', KNOWN_221['Capability'], kept, prefix);
  openListIn(evse, 'parking_restrictions', KNOWN_221['ParkingRestriction'], kept, prefix);
  if (Array.isArray(evse['connectors'])) evse['connectors'] = (evse['connectors'] as Rec[]).map((c) => connectorInto(c, kept, `${prefix}connectors.${String(c['id'])}.`));
  return evse as unknown as Evse;
}

function connectorOutOf(connector: Connector, kept: Readonly<Rec> | undefined, prefix: string): Rec {
  return restore({ ...strip(connector) }, kept, prefix);
}

function evseOutOf(evse: Evse, kept: Readonly<Rec> | undefined, prefix: string): Rec {
  const out = restore({ ...strip(evse) }, kept, prefix);
  out['connectors'] = evse.connectors.map((c) => connectorOutOf(c, kept, `${prefix}connectors.${c.id}.`));
  return out;
}

/** A 2.3.0 Location: 2.2.1 members as they are, help_phone, parking_places, EVSE parking... and extensions kept. */
function locationIn(wire: unknown): Location {
  const kept: Rec = {};
  const location = split(wire as Rec, LOCATION_221, kept, '');
  openListIn(location, 'facilities', KNOWN_221['Facility'], kept, '');
  openValueIn(location, 'parking_type', KNOWN_221['ParkingType'], kept, '', undefined);
  if (Array.isArray(location['evses'])) location['evses'] = (location['evses'] as Rec[]).map((e) => evseInto(e, kept, `evses.${String(e['uid'])}.`));
  return withFields(location as unknown as Location, kept);
}

function locationOut(location: Location): Rec {
  const kept = keptOf(location);
  const out = restore({ ...strip(location) }, kept, '');
  if (location.evses) out['evses'] = location.evses.map((e) => evseOutOf(e, kept, `evses.${e.uid}.`));
  return out;
}

/** A 2.3.0 Price list taxes are kept under "<member>.taxes" (prices.ts). */
function pricesIn(object: Rec, members: readonly string[], kept: Rec): void {
  for (const member of members) {
    const price = object[member] as Price230 | null | undefined;
    if (price === undefined) continue;
    if (price === null) { kept[`${member}.taxes`] = null; continue; }
    object[member] = priceIn(price);
    kept[`${member}.taxes`] = price.taxes ?? null;
  }
}

function pricesOut(object: Rec, members: readonly string[], kept: Readonly<Rec> | undefined): void {
  for (const member of members) {
    const price = object[member] as Price221 | null | undefined;
    if (price) object[member] = priceOut(price, kept?.[`${member}.taxes`] as TaxAmount[] | undefined);
  }
}

/** A 2.3.0 Tariff: min/max PriceLimit as 2.2.1 Prices; tax_included and extensions kept. */
function tariffInto(wire: Rec, kept: Rec, prefix: string, derived: Record<string, true> = {}): Tariff {
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

function tariffOutOf(tariff: Tariff, kept: Readonly<Rec> | undefined, prefix: string): Rec {
  const out = restore({ ...strip(tariff) }, kept, prefix);
  for (const limit of ['min_price', 'max_price']) if (out[limit]) out[limit] = priceLimitOut(out[limit] as Price221);
  // mod_tariffs.asciidoc Tariff object: tax_included is required in 2.3.0; a 2.2.1 Tariff's prices are
  // excl. VAT (mod_tariffs.asciidoc 11.4.2 PriceComponent), so a Tariff that no 2.3.0 party sent says NO.
  out['tax_included'] ??= 'NO';
  return out;
}

function sessionIn(wire: unknown): Session {
  const kept: Rec = {};
  const session = split(wire as Rec, SESSION_221, kept, '');
  pricesIn(session, ['total_cost'], kept);
  return withFields(session as unknown as Session, compactKept(kept));
}

function sessionOut(session: Session): Rec {
  const kept = keptOf(session);
  const out = restore({ ...strip(session) }, kept, '');
  pricesOut(out, ['total_cost'], kept);
  return out;
}

function cdrIn(wire: unknown): Cdr {
  const kept: Rec = {};
  const cdr = split(wire as Rec, CDR_221, kept, '');
  pricesIn(cdr, CDR_PRICES, kept);
  if (Array.isArray(cdr['tariffs'])) cdr['tariffs'] = (cdr['tariffs'] as Rec[]).map((t) => tariffInto(t, kept, `tariffs.${String(t['id'])}.`));
  return withFields(cdr as unknown as Cdr, compactKept(kept));
}

function cdrOut(cdr: Cdr): Rec {
  const kept = keptOf(cdr);
  const out = restore({ ...strip(cdr) }, kept, '');
  pricesOut(out, CDR_PRICES, kept);
  if (cdr.tariffs) out['tariffs'] = cdr.tariffs.map((t) => tariffOutOf(t, kept, `tariffs.${t.id}.`));
  return out;
}

/** A null kept member (a price sent without taxes) is only a removal in a PATCH: left out of a full object. */
function compactKept(kept: Rec): Rec {
  for (const [name, value] of Object.entries(kept)) if (value === null) delete kept[name];
  return kept;
}

function tokenIn(wire: unknown, owner: Owner): Token {
  const kept: Rec = {};
  const token = split(wire as Rec, TOKEN_221, kept, '');
  openValueIn(token, 'type', KNOWN_221['TokenType'], kept, '', 'token type');
  return withFields(v221.tokenIn(token, owner), kept);
}

const tokenOut = (token: Token): Rec => restore({ ...strip(token) }, keptOf(token), '');

/**
 * credentials.asciidoc Credentials object: 2.3.0 has no HUB role; a hub names itself in hub_party_id
 * and lists the parties reachable through it among its roles. credentials: the canonical Credentials
 * whose roles are those parties (the caller picks the ones the partner is routed to) and whose HUB
 * role, when present, gives hub_party_id.
 */
function credentialsOut(credentials: Credentials): Rec {
  const roles = credentials.roles as unknown as Array<{ role: Role; country_code: string; party_id: string }>;
  const hub = roles.find((r) => r.role === 'HUB');
  const reachable = roles.filter((r) => r.role !== 'HUB');
  // roles is required, one or more (Credentials object, Card. +), and 2.3.0 has no HUB role: while no
  // party is reachable yet (no routing rule), the hub lists its own party as OTHER, the role the Role
  // enum has for anything else (types.asciidoc Role), named again in hub_party_id
  // (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md).
  const out: Rec = { ...strip(credentials), roles: reachable.length > 0 || !hub ? reachable : [{ ...hub, role: 'OTHER' }] };
  if (hub) out['hub_party_id'] = `${hub.country_code}${hub.party_id}`;
  return out;
}

/** A 2.3.0 partner's Credentials as 2.2.1 holds them (credentials.asciidoc): its roles; a hub_party_id, from a partner that is itself a hub, is kept. */
function credentialsIn(wire: unknown): Credentials {
  const { hub_party_id, ...rest } = wire as Rec;
  return withFields(rest as unknown as Credentials, hub_party_id === undefined ? {} : { hub_party_id });
}

function versionDetailsOut(details: VersionDetails, partyRole: 'CPO' | 'EMSP'): Rec {
  return { ...(v221.versionDetailsOut(details, partyRole) as Rec), version: V };
}

type Adapter230 = VersionAdapter & { readonly version: '2.3.0' };

/**
 * 2.3.0 tolerates unknown members (transport_and_format.asciidoc, Non-specified JSON fields), so a 2.3.0
 * body may name the hub-private member: it is removed before any translation, so that no partner sets
 * it (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md).
 */
function guarded(adapter: Adapter230): Adapter230 {
  const out: Record<string, unknown> = { ...adapter };
  for (const [name, fn] of Object.entries(adapter)) {
    if (typeof fn !== 'function' || !name.endsWith('In')) continue;
    const translate = fn as (wire: unknown, ...rest: unknown[]) => unknown;
    out[name] = (wire: unknown, ...rest: unknown[]) => translate(wire !== null && typeof wire === 'object' ? withoutVersionFields(wire) : wire, ...rest);
  }
  return out as unknown as Adapter230;
}

/** Every object that is the same in both versions goes through the 2.2.1 adapter. */
export const v230: Adapter230 = guarded({
  ...v221,
  version: V,
  schemaId: (object) => `ocpi-2.3.0/${object}.json`,
  locationIn: (location, owner) => v221.locationIn(locationIn(location), owner),
  evseIn: (evse) => { const kept: Rec = {}; return withFields(evseInto(evse as Rec, kept, ''), kept); },
  connectorIn: (connector) => { const kept: Rec = {}; return withFields(connectorInto(connector as Rec, kept, ''), kept); },
  locationPatchIn: (patch) => locationIn(patch),
  // A PATCH carries the same members as the object (mod_locations.asciidoc, PATCH Method): split the same way.
  evsePatchIn: (patch) => { const kept: Rec = {}; return withFields(evseInto(patch as Rec, kept, ''), kept); },
  connectorPatchIn: (patch) => { const kept: Rec = {}; return withFields(connectorInto(patch as Rec, kept, ''), kept); },
  tariffIn: (tariff, owner) => {
    const kept: Rec = {};
    const derived: Record<string, true> = {};
    const canonical = v221.tariffIn(tariffInto(tariff as Rec, kept, '', derived), owner);
    return compact({ ...canonical, hub_version_fields: fieldsFor(V, kept, derived) });
  },
  tokenIn,
  tokenPatchIn: (patch) => { const kept: Rec = {}; const token = split(patch as Rec, TOKEN_221, kept, ''); openValueIn(token, 'type', KNOWN_221['TokenType'], kept, '', 'token type'); return withFields(token, kept); },
  sessionIn: (session) => sessionIn(session),
  sessionPatchIn: (patch) => { const kept: Rec = {}; const session = split(patch as Rec, SESSION_221, kept, ''); pricesIn(session, ['total_cost'], kept); return withFields(session, kept); },
  cdrIn: (cdr) => cdrIn(cdr),
  credentialsIn: (credentials) => credentialsIn(credentials),
  locationOut,
  evseOut: (evse) => evseOutOf(evse, keptOf(evse), ''),
  connectorOut: (connector) => connectorOutOf(connector, keptOf(connector), ''),
  locationPatchOut: (patch) => locationOut(patch as Location),
  evsePatchOut: (patch) => (patch.connectors ? evseOutOf(patch as Evse, keptOf(patch), '') : restore({ ...strip(patch) }, keptOf(patch), '')),
  connectorPatchOut: (patch) => connectorOutOf(patch as Connector, keptOf(patch), ''),
  tariffOut: (tariff) => tariffOutOf(tariff, keptOf(tariff), ''),
  tokenOut,
  tokenPatchOut: (patch) => tokenOut(patch as Token),
  sessionOut: (session) => sessionOut(session),
  sessionPatchOut: (patch) => sessionOut(patch as Session),
  cdrOut: (cdr) => cdrOut(cdr),
  credentialsOut,
  versionDetailsOut,
});
