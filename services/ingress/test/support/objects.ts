import { locationEventTypes } from '@hub/events';
import { pathSubject } from '@hub/modules';
import type { ObjectPath } from '@hub/core';
import type { Arrange, InMemoryHub } from '@hub/testing';
import type { Location } from '@hub/schemas/generated/ocpi/location';
import type { Tariff } from '@hub/schemas/generated/ocpi/tariff';
import type { Session } from '@hub/schemas/generated/ocpi/session';
import type { Cdr } from '@hub/schemas/generated/ocpi/cdr';
import { CPO } from './ingress-spec.ts';

// Small valid OCPI objects of the test CPO (mod_locations.asciidoc, mod_tariffs.asciidoc).

export function location(id: string, lastUpdated = '2026-01-01T10:00:00Z'): Location {
  return {
    country_code: CPO.countryCode,
    party_id: CPO.partyId,
    id,
    publish: true,
    address: 'Stationsplein 1',
    city: 'Utrecht',
    country: 'NLD',
    coordinates: { latitude: '52.08900', longitude: '5.11000' },
    time_zone: 'Europe/Amsterdam',
    evses: [
      {
        uid: 'EVSE1',
        status: 'AVAILABLE',
        connectors: [{ id: '1', standard: 'IEC_62196_T2', format: 'SOCKET', power_type: 'AC_3_PHASE', max_voltage: 230, max_amperage: 16, last_updated: lastUpdated }],
        last_updated: lastUpdated,
      },
    ],
    last_updated: lastUpdated,
  };
}

export function tariff(id: string): Tariff {
  return {
    country_code: CPO.countryCode,
    party_id: CPO.partyId,
    id,
    currency: 'EUR',
    elements: [{ price_components: [{ type: 'TIME', price: 2, step_size: 60 }] }],
    last_updated: '2026-01-01T10:00:00Z',
  };
}

let offset = 0;
/** Given locations in the read model, as the projector leaves them after their PUTs (times apart). */
export const storedLocations = (...ids: string[]): Arrange<InMemoryHub> => async (hub) => {
  const records = ids.map((id, i) => {
    const path: ObjectPath = { countryCode: CPO.countryCode, partyId: CPO.partyId, id };
    return { offset: String(offset++), type: locationEventTypes.locationPut, subject: pathSubject(path), data: location(id) as unknown as Record<string, unknown>, time: `2026-01-01T10:00:0${i % 10}Z` };
  });
  // The read model's own partition (not the topic's): the ingress waits only for what it appended.
  await hub.readModels.applyBatch('locations', 9, records);
};

export function session(id: string): Session {
  return {
    country_code: CPO.countryCode,
    party_id: CPO.partyId,
    id,
    start_date_time: '2026-01-01T10:00:00Z',
    kwh: 0,
    cdr_token: { country_code: 'DE', party_id: 'EMB', uid: 'TOKEN1', type: 'RFID', contract_id: 'DE-EMB-C1' },
    auth_method: 'WHITELIST',
    location_id: 'LOC1',
    evse_uid: 'EVSE1',
    connector_id: '1',
    currency: 'EUR',
    status: 'PENDING',
    last_updated: '2026-01-01T10:00:00Z',
  };
}

export function cdr(id: string, totalCost = 4): Cdr {
  return {
    country_code: CPO.countryCode,
    party_id: CPO.partyId,
    id,
    start_date_time: '2026-01-01T10:00:00Z',
    end_date_time: '2026-01-01T11:00:00Z',
    cdr_token: { country_code: 'DE', party_id: 'EMB', uid: 'TOKEN1', type: 'RFID', contract_id: 'DE-EMB-C1' },
    auth_method: 'WHITELIST',
    cdr_location: {
      id: 'LOC1',
      address: 'Stationsplein 1',
      city: 'Utrecht',
      country: 'NLD',
      coordinates: { latitude: '52.08900', longitude: '5.11000' },
      evse_uid: 'EVSE1',
      evse_id: 'NL*CPA*E1',
      connector_id: '1',
      connector_standard: 'IEC_62196_T2',
      connector_format: 'SOCKET',
      connector_power_type: 'AC_3_PHASE',
    },
    currency: 'EUR',
    charging_periods: [{ start_date_time: '2026-01-01T10:00:00Z', dimensions: [{ type: 'TIME', volume: 1 }] }],
    total_cost: { excl_vat: totalCost },
    total_energy: 10,
    total_time: 1,
    last_updated: '2026-01-01T11:00:00Z',
  };
}
