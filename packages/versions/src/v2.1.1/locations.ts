// Location between OCPI 2.1.1 (mod_locations.md 3.1) and the canonical 2.2.1 Location
// (mod_locations.asciidoc 8.3.1). EVSE and Connector: evses.ts.
import type { Location, Owner, Patch } from '../canonical.ts';
import { compact, fieldsFor, versionFields, type WithVersionFields } from '../version-fields.ts';
import { derivedTimeZone, energyMixIn, energyMixOut, hoursIn, hoursOut } from './common.ts';
import { evseIn, evseOutOrSkip } from './evses.ts';
import type * as W from './types.ts';

type ParkingType = NonNullable<Location['parking_type']>;
type LocationType = W.Location['type'];
type Facility211 = NonNullable<W.Location['facilities']>[number];

/** mod_locations.md 4.16 LocationType -> mod_locations.asciidoc 8.4.18 ParkingType: the same values but OTHER and UNKNOWN, which 2.2.1 has none for. */
const PARKING_TYPE: Readonly<Partial<Record<LocationType, ParkingType>>> = { ON_STREET: 'ON_STREET', PARKING_GARAGE: 'PARKING_GARAGE', UNDERGROUND_GARAGE: 'UNDERGROUND_GARAGE', PARKING_LOT: 'PARKING_LOT' };
/** ALONG_MOTORWAY and ON_DRIVEWAY have no 2.1.1 value: OTHER ("None of the given possibilities", mod_locations.md 4.16). */
const LOCATION_TYPE: Readonly<Record<ParkingType, LocationType>> = { ...(PARKING_TYPE as Record<string, LocationType>), ALONG_MOTORWAY: 'OTHER', ON_DRIVEWAY: 'OTHER' } as Record<ParkingType, LocationType>;
const FACILITIES_211: ReadonlySet<string> = new Set<Facility211>(['HOTEL', 'RESTAURANT', 'CAFE', 'MALL', 'SUPERMARKET', 'SPORT', 'RECREATION_AREA', 'NATURE', 'MUSEUM', 'BUS_STOP', 'TAXI_STAND', 'TRAIN_STATION', 'AIRPORT', 'CARPOOL_PARKING', 'FUEL_STATION', 'WIFI']);

/**
 * A 2.1.1 Location as the canonical one. country_code and party_id are the sending CPO's (2.1.1
 * objects carry none). 2.2.1 requires publish and time_zone (8.3.1): 2.1.1 has no publish and every
 * Location a CPO pushes is for its eMSPs to show, so publish is true; a missing time_zone is the
 * country's only zone, else UTC. Both are recorded as derived. type OTHER or UNKNOWN, which ParkingType
 * has no value for, is kept as sent.
 */
export function locationIn(location: W.Location, owner: Owner): WithVersionFields<Location> {
  const { type, evses, energy_mix, opening_times, time_zone, ...same } = location;
  const parking = PARKING_TYPE[type];
  const hours = opening_times && hoursIn(opening_times);
  const derived: Record<string, true> = { publish: true };
  if (time_zone === undefined) derived['time_zone'] = true;
  if (hours?.derived) derived['opening_times.twentyfourseven'] = true;
  return compact({
    country_code: owner.countryCode,
    party_id: owner.partyId,
    ...same,
    publish: true,
    parking_type: parking,
    evses: evses?.map(evseIn),
    time_zone: time_zone ?? derivedTimeZone(location.country),
    opening_times: hours?.hours,
    energy_mix: energy_mix && energyMixIn(energy_mix),
    hub_version_fields: fieldsFor('2.1.1', parking ? {} : { type }, derived),
  });
}

/**
 * The canonical Location as 2.1.1. Dropped: country_code, party_id (in the URL), publish and
 * publish_allowed_to, state, facilities 2.1.1 has no value for, EVSEs with no connector 2.1.1 can name
 * (evses.ts). A missing postal_code (optional in 2.2.1 only when the location has none) is "".
 */
export function locationOut(location: WithVersionFields<Location>): W.Location {
  const fields = versionFields(location, '2.1.1');
  const derived = fields?.derived ?? {};
  const { country_code: _c, party_id: _p, publish: _pub, publish_allowed_to: _pat, state: _s, parking_type, evses, energy_mix, opening_times, time_zone, facilities, hub_version_fields: _h, postal_code, ...same } = location;
  return compact({
    ...same,
    type: locationType(parking_type, fields?.kept),
    postal_code: postal_code ?? '',
    evses: evses?.flatMap((e) => evseOutOrSkip(e)),
    facilities: facilitiesOut(facilities),
    time_zone: derived['time_zone'] ? undefined : time_zone,
    opening_times: opening_times && hoursOut(opening_times, derived['opening_times.twentyfourseven'] === true),
    energy_mix: energy_mix && energyMixOut(energy_mix),
  });
}

function locationType(parking: ParkingType | null | undefined, kept: Readonly<Record<string, unknown>> | undefined): LocationType {
  if (parking) return LOCATION_TYPE[parking];
  const sent = kept?.['type'];
  // mod_locations.md 4.16: UNKNOWN is the default ("not known by the operator").
  return sent === 'OTHER' || sent === 'UNKNOWN' ? sent : 'UNKNOWN';
}

function facilitiesOut(facilities: Location['facilities']): W.Location['facilities'] {
  if (!facilities) return undefined;
  const kept = facilities.filter((f) => FACILITIES_211.has(f)) as Facility211[];
  return kept.length === 0 && facilities.length > 0 ? undefined : kept;
}

export type LocationPatch = Patch<WithVersionFields<Location>>;

/**
 * A 2.1.1 Location PATCH as a canonical one: each field present maps as in locationIn. type maps to
 * parking_type (null for OTHER/UNKNOWN) and to the kept type (null removes a kept one). A time_zone
 * removal (null) is left out: 2.2.1 requires one, so the stored zone stays.
 */
export function locationPatchIn(patch: Patch<W.Location>): LocationPatch {
  const { type, evses, energy_mix, opening_times, time_zone, ...same } = patch;
  const out: LocationPatch = { ...same };
  const kept: Record<string, unknown> = {};
  const derived: Record<string, true | null> = {};
  if (type) {
    out.parking_type = PARKING_TYPE[type] ?? null;
    kept['type'] = PARKING_TYPE[type] ? null : type;
  }
  if (evses !== undefined) out.evses = evses && evses.map(evseIn);
  if (energy_mix !== undefined) out.energy_mix = energy_mix && energyMixIn(energy_mix);
  if (typeof time_zone === 'string') {
    out.time_zone = time_zone;
    derived['time_zone'] = null;
  }
  if (opening_times !== undefined) {
    const hours = opening_times && hoursIn(opening_times);
    out.opening_times = hours ? hours.hours : null;
    derived['opening_times.twentyfourseven'] = hours?.derived ? true : null;
  }
  const fields = fieldsFor('2.1.1', kept, derived);
  if (fields) out.hub_version_fields = fields;
  return out;
}

/** A canonical Location PATCH as 2.1.1: as locationOut, field by field; a parking_type removal is type UNKNOWN. */
export function locationPatchOut(patch: LocationPatch): Patch<W.Location> {
  const { country_code: _c, party_id: _p, publish: _pub, publish_allowed_to: _pat, state: _s, parking_type, evses, energy_mix, opening_times, facilities, hub_version_fields, ...same } = patch;
  const out: Patch<W.Location> = { ...same };
  const kept = hub_version_fields?.['2.1.1']?.kept;
  if (parking_type !== undefined || kept?.['type']) out.type = locationType(parking_type, kept);
  if (evses !== undefined) out.evses = evses && evses.flatMap((e) => evseOutOrSkip(e));
  if (facilities !== undefined) out.facilities = facilities && (facilitiesOut(facilities) ?? null);
  if (energy_mix !== undefined) out.energy_mix = energy_mix && energyMixOut(energy_mix);
  if (opening_times !== undefined) out.opening_times = opening_times && hoursOut(opening_times, hub_version_fields?.['2.1.1']?.derived?.['opening_times.twentyfourseven'] === true);
  return out;
}
