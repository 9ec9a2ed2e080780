// The members of the canonical 2.2.1 objects and the helpers the OCPI 2.3.0 adapter splits a 2.3.0
// object with: what 2.2.1 holds goes to the canonical object, the rest is kept in
// hub_version_fields['2.3.0'] for 2.3.0 readers (docs/reference/version-mapping.md, OCPI 2.3.0).
import { HubError } from '@hub/ocpi';
import type { Location } from '../canonical.ts';
import { v221 } from '../v2.2.1/index.ts';
import { compact, fieldsFor, HUB_VERSION_FIELDS, type VersionFieldsByVersion } from '../version-fields.ts';

export type Rec = Record<string, unknown>;
export const V = '2.3.0' as const;

/** The members of each 2.2.1 object (schemas/ocpi/*.json): any other member of a 2.3.0 object is 2.3.0-only or an extension, and is kept. */
export const LOCATION_221 = new Set(['country_code', 'party_id', 'id', 'publish', 'publish_allowed_to', 'name', 'address', 'city', 'postal_code', 'state', 'country', 'coordinates', 'related_locations', 'parking_type', 'evses', 'directions', 'operator', 'suboperator', 'owner', 'facilities', 'time_zone', 'opening_times', 'charging_when_closed', 'images', 'energy_mix', 'last_updated']);
export const EVSE_221 = new Set(['uid', 'evse_id', 'status', 'status_schedule', 'capabilities', 'connectors', 'floor_level', 'coordinates', 'physical_reference', 'directions', 'parking_restrictions', 'images', 'last_updated']);
export const CONNECTOR_221 = new Set(['id', 'standard', 'format', 'power_type', 'max_voltage', 'max_amperage', 'max_electric_power', 'tariff_ids', 'terms_and_conditions', 'last_updated']);
export const TARIFF_221 = new Set(['country_code', 'party_id', 'id', 'currency', 'type', 'tariff_alt_text', 'tariff_alt_url', 'min_price', 'max_price', 'elements', 'start_date_time', 'end_date_time', 'energy_mix', 'last_updated']);
export const SESSION_221 = new Set(['country_code', 'party_id', 'id', 'start_date_time', 'end_date_time', 'kwh', 'cdr_token', 'auth_method', 'authorization_reference', 'location_id', 'evse_uid', 'connector_id', 'meter_id', 'currency', 'charging_periods', 'total_cost', 'status', 'last_updated']);
export const CDR_221 = new Set(['country_code', 'party_id', 'id', 'start_date_time', 'end_date_time', 'session_id', 'cdr_token', 'auth_method', 'authorization_reference', 'cdr_location', 'meter_id', 'currency', 'tariffs', 'charging_periods', 'signed_data', 'total_cost', 'total_fixed_cost', 'total_energy', 'total_energy_cost', 'total_time', 'total_time_cost', 'total_parking_time', 'total_parking_cost', 'total_reservation_cost', 'remark', 'invoice_reference_id', 'credit', 'credit_reference_id', 'home_charging_compensation', 'last_updated']);
export const TOKEN_221 = new Set(['country_code', 'party_id', 'uid', 'type', 'contract_id', 'visual_number', 'issuer', 'group_id', 'valid', 'whitelist', 'language', 'default_profile_type', 'energy_contract', 'last_updated']);

/** The 2.2.1 values of the enums 2.3.0 made open (types.asciidoc OpenEnum type). */
export const KNOWN_221: Readonly<Record<string, ReadonlySet<string>>> = Object.fromEntries(Object.entries({"Facility":["HOTEL","RESTAURANT","CAFE","MALL","SUPERMARKET","SPORT","RECREATION_AREA","NATURE","MUSEUM","BIKE_SHARING","BUS_STOP","TAXI_STAND","TRAM_STOP","METRO_STATION","TRAIN_STATION","AIRPORT","PARKING_LOT","CARPOOL_PARKING","FUEL_STATION","WIFI"],"ParkingType":["ALONG_MOTORWAY","PARKING_GARAGE","PARKING_LOT","ON_DRIVEWAY","ON_STREET","UNDERGROUND_GARAGE"],"Capability":["CHARGING_PROFILE_CAPABLE","CHARGING_PREFERENCES_CAPABLE","CHIP_CARD_SUPPORT","CONTACTLESS_CARD_SUPPORT","CREDIT_CARD_PAYABLE","DEBIT_CARD_PAYABLE","PED_TERMINAL","REMOTE_START_STOP_CAPABLE","RESERVABLE","RFID_READER","START_SESSION_CONNECTOR_REQUIRED","TOKEN_GROUP_CAPABLE","UNLOCK_CAPABLE"],"ParkingRestriction":["EV_ONLY","PLUGGED","DISABLED","CUSTOMERS","MOTORCYCLES"],"ConnectorType":["CHADEMO","CHAOJI","DOMESTIC_A","DOMESTIC_B","DOMESTIC_C","DOMESTIC_D","DOMESTIC_E","DOMESTIC_F","DOMESTIC_G","DOMESTIC_H","DOMESTIC_I","DOMESTIC_J","DOMESTIC_K","DOMESTIC_L","DOMESTIC_M","DOMESTIC_N","DOMESTIC_O","GBT_AC","GBT_DC","IEC_60309_2_single_16","IEC_60309_2_three_16","IEC_60309_2_three_32","IEC_60309_2_three_64","IEC_62196_T1","IEC_62196_T1_COMBO","IEC_62196_T2","IEC_62196_T2_COMBO","IEC_62196_T3A","IEC_62196_T3C","NEMA_5_20","NEMA_6_30","NEMA_6_50","NEMA_10_30","NEMA_10_50","NEMA_14_30","NEMA_14_50","PANTOGRAPH_BOTTOM_UP","PANTOGRAPH_TOP_DOWN","TESLA_R","TESLA_S"],"TokenType":["AD_HOC_USER","APP_USER","OTHER","RFID"]}).map(([name, values]) => [name, new Set(values)]));

/** The members a 2.2.1 object has, and the others into kept under prefix. */
export function split(object: Rec, known: ReadonlySet<string>, kept: Rec, prefix: string): Rec {
  const out: Rec = {};
  for (const [name, value] of Object.entries(object)) {
    if (known.has(name)) out[name] = value;
    else if (name !== HUB_VERSION_FIELDS) kept[prefix + name] = value;
  }
  return out;
}

/** A list of open-enum values as 2.2.1 holds it: the values it has; the list as sent is kept when it had others. */
export function openListIn(object: Rec, name: string, known: ReadonlySet<string> | undefined, kept: Rec, prefix: string): void {
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
export function openValueIn(object: Rec, name: string, known: ReadonlySet<string> | undefined, kept: Rec, prefix: string, required: string | undefined): void {
  const value = object[name];
  if (typeof value !== 'string' || !known || known.has(value)) return;
  if (required) throw new HubError('INVALID_PARAMETERS', { detail: `${required}: ${value} has no value in the hub's canonical OCPI 2.2.1 form (types.asciidoc OpenEnum)` });
  kept[prefix + name] = value;
  delete object[name];
}

/**
 * The 2.2.1 members of a PATCH whose earlier value may be kept (an open-enum value 2.2.1 lacks, or a
 * child list whose children kept theirs): a PATCH replaces each member it carries (mod_locations.asciidoc,
 * PATCH Method), so what was kept of it is removed (null: mergeVersionFields removes the path and what
 * is under it) unless openListIn or openValueIn keeps the new value. Without it a 2.3.0 reader got the
 * old list back after a PATCH sent only 2.2.1 values.
 */
export const REPLACED_BY_PATCH = {
  location: ['facilities', 'parking_type', 'evses'],
  evse: ['capabilities', 'parking_restrictions', 'connectors'],
  connector: ['standard'],
} as const;

export function clearedIn(patch: Rec, members: readonly string[], kept: Rec, prefix: string): void {
  for (const name of members) if (name in patch) kept[prefix + name] = null;
}

/**
 * The members kept under prefix, back on the object (a 2.3.0 reader gets what the 2.3.0 sender sent).
 * A null of a PATCH removes a 2.3.0-only member (help_phone: null), but for a member the object has
 * (clearedIn) it only removed what was kept: the PATCH's own value stands.
 */
export function restore(object: Rec, kept: Readonly<Rec> | undefined, prefix: string): Rec {
  if (!kept) return object;
  for (const [path, value] of Object.entries(kept)) {
    if (!path.startsWith(prefix)) continue;
    const name = path.slice(prefix.length);
    if (name.includes('.') || (value === null && name in object)) continue;
    object[name] = value;
  }
  return object;
}

export const keptOf = (object: object): Readonly<Rec> | undefined => (object as { hub_version_fields?: VersionFieldsByVersion }).hub_version_fields?.[V]?.kept;
export const withFields = <T extends object>(object: T, kept: Rec): T => compact({ ...object, hub_version_fields: fieldsFor(V, kept, {}) });
export const strip = (object: object): Rec => v221.locationOut(object as Location) as Rec;
