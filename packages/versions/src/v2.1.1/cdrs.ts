// CDR between OCPI 2.1.1 (mod_cdrs.md 3.1) and 2.2.1 (mod_cdrs.asciidoc 10.3.1).
import { HubError } from '@hub/ocpi';
import type { Cdr, CdrLocation, CdrToken, Location, Owner } from '../canonical.ts';
import { NotRepresentableError } from '../errors.ts';
import { compact, fieldsFor, nonEmpty, versionFields, type WithVersionFields } from '../version-fields.ts';
import { chargingPeriodsIn, chargingPeriodsOut } from './common.ts';
import { authMethodOut, placeOut, sameCiString, sessionPlace } from './sessions.ts';
import { tariffIn, tariffOut } from './tariffs.ts';
import type * as W from './types.ts';

/**
 * A 2.1.1 CDR as the canonical one. cdr_location (mod_cdrs.asciidoc 10.4.4) is built from its Location
 * and the one EVSE and connector in it; the Location is kept as sent. 2.2.1 requires an evse_id there,
 * optional in 2.1.1 (mod_locations.md 3.2): without one it is the EVSE's uid (derived). stop_date_time is
 * end_date_time; total_cost is excl. VAT (mod_cdrs.md 3.1): the Price's excl_vat. The embedded tariffs
 * are the CPO's. cdr_token is resolved by the caller (cdrTokenFromAuthId). A CDR whose periods hold only
 * FLAT dimensions has no 2.2.1 period left (2.2.1 requires one) and is refused.
 */
export function cdrIn(cdr: W.Cdr, owner: Owner, cdrToken: CdrToken): WithVersionFields<Cdr> {
  const { stop_date_time, auth_id: _a, location, tariffs, charging_periods, total_cost, ...same } = cdr;
  const { evse, connector } = sessionPlace(location, 'cdr');
  const periods = chargingPeriodsIn(charging_periods);
  if (periods.periods.length === 0) throw new HubError('INVALID_PARAMETERS', { detail: 'charging_periods: only FLAT dimensions, which OCPI 2.2.1 has no value for (mod_cdrs.asciidoc 10.4.3)' });
  const cdrLocation: CdrLocation = compact({
    id: location.id,
    name: location.name,
    address: location.address,
    city: location.city,
    postal_code: location.postal_code,
    country: location.country,
    coordinates: location.coordinates,
    evse_uid: evse.uid,
    evse_id: evse.evse_id ?? evse.uid,
    connector_id: connector.id,
    connector_standard: connector.standard,
    connector_format: connector.format,
    connector_power_type: connector.power_type,
  });
  return compact({
    country_code: owner.countryCode,
    party_id: owner.partyId,
    ...same,
    end_date_time: stop_date_time,
    cdr_token: cdrToken,
    cdr_location: cdrLocation,
    tariffs: tariffs?.map((t) => tariffIn(t, owner)),
    charging_periods: nonEmpty(periods.periods),
    total_cost: { excl_vat: total_cost },
    hub_version_fields: fieldsFor('2.1.1', { location, ...(periods.lossy ? { charging_periods } : {}) }, evse.evse_id === undefined ? { 'cdr_location.evse_id': true } : {}),
  });
}

/**
 * The canonical CDR as 2.1.1. Its location is the Location as the 2.1.1 CPO sent it, else the
 * canonical `location` the caller read, with only the CDR's EVSE and connector and the address,
 * coordinates and connector facts of cdr_location (what was true at the session); with neither it is
 * not representable. Dropped: country_code, party_id, session_id, cdr_token (but its contract_id, the
 * auth_id), authorization_reference, signed_data, total_cost.incl_vat, total_fixed_cost,
 * total_energy_cost, total_time_cost, total_parking_cost, total_reservation_cost, invoice_reference_id,
 * credit, credit_reference_id, home_charging_compensation, tariffs 2.1.1 cannot represent. A Credit CDR
 * keeps its meaning: its total_cost is negative (mod_cdrs.asciidoc, Credit CDRs).
 */
export function cdrOut(cdr: WithVersionFields<Cdr>, location?: Location): W.Cdr {
  const kept = versionFields(cdr, '2.1.1')?.kept;
  const {
    country_code: _c, party_id: _p, end_date_time, session_id: _s, cdr_token, auth_method, authorization_reference: _r, cdr_location, tariffs, charging_periods, signed_data: _sd, total_cost,
    total_fixed_cost: _f, total_energy_cost: _ec, total_time_cost: _tc, total_parking_cost: _pc, total_reservation_cost: _rc, invoice_reference_id: _i, credit: _cr, credit_reference_id: _cri, home_charging_compensation: _hc, hub_version_fields: _h,
    ...same
  } = cdr;
  const periods = (kept?.['charging_periods'] as W.ChargingPeriod[] | undefined) ?? chargingPeriodsOut(charging_periods);
  if (periods.length === 0) throw new NotRepresentableError('2.1.1', 'CDR', `${cdr.id}: no charging period with a 2.1.1 dimension`);
  return compact({
    ...same,
    stop_date_time: end_date_time,
    auth_id: cdr_token.contract_id,
    auth_method: authMethodOut(auth_method),
    location: (kept?.['location'] as W.Location | undefined) ?? cdrPlaceOut(cdr_location, location),
    tariffs: tariffs?.flatMap((t) => {
      try {
        return [tariffOut(t)];
      } catch {
        return [];
      }
    }),
    charging_periods: nonEmpty(periods),
    total_cost: total_cost.excl_vat,
  });
}

function cdrPlaceOut(at: CdrLocation, location: Location | undefined): W.Location {
  const evse = location?.evses?.find((e) => sameCiString(e.uid, at.evse_uid));
  const connector = evse?.connectors.find((c) => sameCiString(c.id, at.connector_id));
  if (!location || !evse || !connector) return placeOut(undefined, at.evse_uid, at.connector_id, 'CDR');
  const then: Location = {
    ...location,
    name: at.name ?? location.name,
    address: at.address,
    city: at.city,
    postal_code: at.postal_code ?? location.postal_code,
    country: at.country,
    coordinates: at.coordinates,
    evses: [{ ...evse, evse_id: at.evse_id, connectors: [{ ...connector, standard: at.connector_standard, format: at.connector_format, power_type: at.connector_power_type }] }],
  };
  return placeOut(then, at.evse_uid, at.connector_id, 'CDR');
}
