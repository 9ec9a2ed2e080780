// The OCPI 2.3.0 adapter (v2.3.0-ed2). 2.3.0 is 2.2.1 plus fields, a Price with a taxes list, a Tariff
// that says whether its prices include taxes, open enums and tolerated unknown fields
// (/work/shared/ocpi-2.3.0/changelog.asciidoc, "Changes between 2.2.1-d2 and 2.3.0"). What the
// canonical 2.2.1 object has no field or value for is kept in hub_version_fields['2.3.0'] and given
// back to 2.3.0 readers; the table is docs/reference/version-mapping.md (OCPI 2.3.0).
// Nested objects (EVSE, Connector inside a Location) keep theirs in the Location's member under the
// path evses.<uid> and evses.<uid>.connectors.<id>, since serializers of other versions only remove
// the top-level member.
import type { VersionAdapter } from '../adapter.ts';
import type { AuthorizationInfo, Connector, Credentials, Evse, Location, Owner, Role, Session, Token, VersionDetails } from '../canonical.ts';
import { v221, withAskedToken } from '../v2.2.1/index.ts';
import { compact, fieldsFor, withoutVersionFields } from '../version-fields.ts';
import { cdrIn, cdrOut, cdrTokenIn, pricesIn, sessionIn, sessionOut, tariffInto, tariffOutOf } from './charging.ts';
import { clearedIn, CONNECTOR_221, EVSE_221, KNOWN_221, keptOf, LOCATION_221, openListIn, openValueIn, REPLACED_BY_PATCH, restore, SESSION_221, split, strip, TOKEN_221, V, withFields, type Rec } from './members.ts';

export * from './prices.ts';

function connectorInto(wire: Rec, kept: Rec, prefix: string, patch = false): Connector {
  const connector = split(wire, CONNECTOR_221, kept, prefix);
  if (patch) clearedIn(connector, REPLACED_BY_PATCH.connector, kept, prefix);
  openValueIn(connector, 'standard', KNOWN_221['ConnectorType'], kept, prefix, 'connector standard');
  return connector as unknown as Connector;
}

function evseInto(wire: Rec, kept: Rec, prefix: string, patch = false): Evse {
  const evse = split(wire, EVSE_221, kept, prefix);
  if (patch) clearedIn(evse, REPLACED_BY_PATCH.evse, kept, prefix);
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
function locationIn(wire: unknown, patch = false): Location {
  const kept: Rec = {};
  const location = split(wire as Rec, LOCATION_221, kept, '');
  if (patch) clearedIn(location, REPLACED_BY_PATCH.location, kept, '');
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

/** A body whose `token` member keeps only the members of a 2.2.1 Token. */
function withToken221(body: unknown): Rec {
  const out = { ...(body as Rec) };
  if (out['token'] !== null && typeof out['token'] === 'object') out['token'] = split(out['token'] as Rec, TOKEN_221, {}, '');
  return out;
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
  locationPatchIn: (patch) => locationIn(patch, true),
  // A PATCH carries the same members as the object (mod_locations.asciidoc, PATCH Method): split the same way.
  evsePatchIn: (patch) => { const kept: Rec = {}; return withFields(evseInto(patch as Rec, kept, '', true), kept); },
  connectorPatchIn: (patch) => { const kept: Rec = {}; return withFields(connectorInto(patch as Rec, kept, '', true), kept); },
  tariffIn: (tariff, owner) => {
    const kept: Rec = {};
    const derived: Record<string, true> = {};
    const canonical = v221.tariffIn(tariffInto(tariff as Rec, kept, '', derived), owner);
    return compact({ ...canonical, hub_version_fields: fieldsFor(V, kept, derived) });
  },
  tokenIn,
  // The Token in a 2.3.0 AuthorizationInfo (mod_tokens.asciidoc, AuthorizationInfo object) may carry
  // members 2.2.1 lacks: an answer is not stored, so they are left out for the caller of another version.
  // The Token of a 2.3.0 StartSession or ReserveNow (mod_commands.asciidoc) goes on to a CPO of any
  // version: members 2.2.1 lacks are left out (a command is not stored for 2.3.0 readers).
  startSessionIn: (command, owner) => v221.startSessionIn(withToken221(command), owner),
  reserveNowIn: (command, owner) => v221.reserveNowIn(withToken221(command), owner),
  // An answer without its required Token gets the one asked about (v2.2.1 withAskedToken).
  authorizationInfoIn: (info, token) => withToken221(withAskedToken(info, token)) as unknown as AuthorizationInfo,
  tokenPatchIn: (patch) => { const kept: Rec = {}; const token = split(patch as Rec, TOKEN_221, kept, ''); openValueIn(token, 'type', KNOWN_221['TokenType'], kept, '', 'token type'); return withFields(token, kept); },
  sessionIn: (session) => sessionIn(session),
  sessionPatchIn: (patch) => { const kept: Rec = {}; const session = split(patch as Rec, SESSION_221, kept, ''); pricesIn(session, ['total_cost'], kept); cdrTokenIn(session, kept, true); return withFields(session, kept); },
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
