// Session between OCPI 2.1.1 (mod_sessions.md 3.1) and 2.2.1 (mod_sessions.asciidoc 9.3.1).
import { HubError } from '@hub/ocpi';
import type { CdrToken, Location, Owner, Patch, Session } from '../canonical.ts';
import { NotRepresentableError } from '../errors.ts';
import { compact, fieldsFor, versionFields, type WithVersionFields } from '../version-fields.ts';
import { chargingPeriodsIn, chargingPeriodsOut } from './common.ts';
import { locationOut } from './locations.ts';
import type * as W from './types.ts';

type AuthMethod211 = W.Session['auth_method'];
type Status211 = W.Session['status'];

/** The EVSE and connector a 2.1.1 session or CDR names: its Location holds "only the relevant EVSE and connector" (mod_sessions.md 3.1, mod_cdrs.md 3.1). */
export function sessionPlace(location: W.Location, object: string): { evse: W.Evse; connector: W.Connector } {
  const evse = location.evses?.[0];
  const connector = evse?.connectors[0];
  if (!evse || !connector) throw new HubError('INVALID_PARAMETERS', { detail: `${object}.location must hold the EVSE and connector used (mod_sessions.md 3.1, mod_cdrs.md 3.1)` });
  return { evse, connector };
}

/**
 * A 2.1.1 Session as the canonical one. location_id, evse_uid and connector_id are those of its
 * Location (the first EVSE and connector), and the Location is kept as sent (a 2.1.1 receiver gets it
 * back). cdr_token is resolved by the caller (cdrTokenFromAuthId). total_cost is excl. VAT
 * (mod_sessions.md 3.1): the Price's excl_vat. Periods with FLAT dimensions are kept as sent too.
 */
export function sessionIn(session: W.Session, owner: Owner, cdrToken: CdrToken): WithVersionFields<Session> {
  const { start_datetime, end_datetime, auth_id: _a, location, charging_periods, total_cost, ...same } = session;
  const { evse, connector } = sessionPlace(location, 'session');
  const periods = charging_periods && chargingPeriodsIn(charging_periods);
  return compact({
    country_code: owner.countryCode,
    party_id: owner.partyId,
    ...same,
    start_date_time: start_datetime,
    end_date_time: end_datetime,
    cdr_token: cdrToken,
    location_id: location.id,
    evse_uid: evse.uid,
    connector_id: connector.id,
    charging_periods: periods?.periods,
    total_cost: total_cost === undefined ? undefined : { excl_vat: total_cost },
    hub_version_fields: fieldsFor('2.1.1', { location, ...(periods?.lossy ? { charging_periods } : {}) }, {}),
  });
}

/** mod_cdrs.md 4.1 has no COMMAND: a session started by a command was authorized by the eMSP, AUTH_REQUEST. */
export const authMethodOut = (method: Session['auth_method']): AuthMethod211 => (method === 'COMMAND' ? 'AUTH_REQUEST' : method);
/** mod_sessions.md 4.1 has no RESERVATION: a reserved session has not started, PENDING. */
/** EVSE uids and connector ids are CiStrings (types.md, CiString): compared case-insensitively, as the hub stores them. */
export const sameCiString = (a: string, b: string): boolean => a.toUpperCase() === b.toUpperCase();

const statusOut = (status: Session['status']): Status211 => (status === 'RESERVATION' ? 'PENDING' : status);

/**
 * The 2.1.1 Location of a session or CDR: the canonical Location with only the given EVSE and connector.
 * Not representable without the Location, or when it does not hold them.
 */
export function placeOut(location: Location | undefined, evseUid: string, connectorId: string, object: string): W.Location {
  const evse = location?.evses?.find((e) => sameCiString(e.uid, evseUid));
  const connector = evse?.connectors.find((c) => sameCiString(c.id, connectorId));
  // The EVSE or connector may be pushed just before the session and not be projected yet: retried.
  if (!location || !evse || !connector) throw new NotRepresentableError('2.1.1', object, `its Location with EVSE ${evseUid} and connector ${connectorId} is needed and unknown`, { retryable: true });
  const out = locationOut({ ...location, evses: [{ ...evse, connectors: [connector] }] });
  if (!out.evses?.length) throw new NotRepresentableError('2.1.1', object, `connector ${connectorId} has no 2.1.1 standard`);
  return out;
}

/**
 * The canonical Session as 2.1.1. Its location is the Location as the 2.1.1 CPO sent it, else the
 * canonical `location` the caller read (only the session's EVSE and connector); with neither it is not
 * representable. auth_id is cdr_token.contract_id. Dropped: country_code, party_id, cdr_token (but its
 * contract_id), authorization_reference, total_cost.incl_vat, the periods' tariff_id.
 */
export function sessionOut(session: WithVersionFields<Session>, location: Location | undefined): W.Session {
  const kept = versionFields(session, '2.1.1')?.kept;
  const { country_code: _c, party_id: _p, start_date_time, end_date_time, cdr_token, auth_method, authorization_reference: _r, location_id: _l, evse_uid, connector_id, charging_periods, total_cost, status, hub_version_fields: _h, ...same } = session;
  return compact({
    ...same,
    start_datetime: start_date_time,
    end_datetime: end_date_time,
    auth_id: cdr_token.contract_id,
    auth_method: authMethodOut(auth_method),
    location: (kept?.['location'] as W.Location | undefined) ?? placeOut(location, evse_uid, connector_id, 'Session'),
    charging_periods: (kept?.['charging_periods'] as W.ChargingPeriod[] | undefined) ?? (charging_periods && chargingPeriodsOut(charging_periods)),
    total_cost: total_cost?.excl_vat,
    status: statusOut(status),
  });
}

export type SessionPatch = Patch<WithVersionFields<Session>>;

/** A 2.1.1 Session PATCH, field by field as sessionIn; with auth_id the caller passes the resolved cdrToken (without one auth_id is left out). */
export function sessionPatchIn(patch: Patch<W.Session>, cdrToken?: CdrToken): SessionPatch {
  const { start_datetime, end_datetime, auth_id, location, charging_periods, total_cost, ...same } = patch;
  const out: SessionPatch = { ...same };
  const kept: Record<string, unknown> = {};
  if (start_datetime) out.start_date_time = start_datetime;
  if (end_datetime !== undefined) out.end_date_time = end_datetime;
  if (auth_id && cdrToken) out.cdr_token = cdrToken;
  if (location) {
    const { evse, connector } = sessionPlace(location, 'session');
    Object.assign(out, { location_id: location.id, evse_uid: evse.uid, connector_id: connector.id });
    kept['location'] = location;
  }
  if (charging_periods !== undefined) {
    const periods = charging_periods && chargingPeriodsIn(charging_periods);
    out.charging_periods = periods ? periods.periods : null;
    kept['charging_periods'] = periods?.lossy ? charging_periods : null;
  }
  if (total_cost !== undefined) out.total_cost = total_cost === null ? null : { excl_vat: total_cost };
  const fields = fieldsFor('2.1.1', kept, {});
  if (fields) out.hub_version_fields = fields;
  return out;
}

/** A canonical Session PATCH as 2.1.1; a changed place needs its Location (the patch's kept one, else `location`). */
export function sessionPatchOut(patch: SessionPatch, location?: Location): Patch<W.Session> {
  const kept = patch.hub_version_fields?.['2.1.1']?.kept;
  const { country_code: _c, party_id: _p, start_date_time, end_date_time, cdr_token, auth_method, authorization_reference: _r, location_id, evse_uid, connector_id, charging_periods, total_cost, status, hub_version_fields: _h, ...same } = patch;
  const out: Patch<W.Session> = { ...same };
  if (start_date_time) out.start_datetime = start_date_time;
  if (end_date_time !== undefined) out.end_datetime = end_date_time;
  if (cdr_token) out.auth_id = cdr_token.contract_id;
  if (auth_method) out.auth_method = authMethodOut(auth_method);
  if (status) out.status = statusOut(status);
  if (kept?.['location']) out.location = kept['location'] as W.Location;
  else if (location_id || evse_uid || connector_id) out.location = placeOut(location, evse_uid ?? '', connector_id ?? '', 'Session PATCH');
  if (charging_periods !== undefined) out.charging_periods = (kept?.['charging_periods'] as W.ChargingPeriod[] | undefined) ?? (charging_periods && chargingPeriodsOut(charging_periods));
  if (total_cost !== undefined) out.total_cost = total_cost && total_cost.excl_vat;
  return out;
}
