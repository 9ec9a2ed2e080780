// The contract of one version's adapter: every OCPI object the hub receives or sends, between that
// version's wire form and the canonical form (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md).
import type {
  AuthorizationInfo, Cdr, CdrToken, CommandResponse, CommandResult, CommandType, Connector, Credentials, Evse, Location, LocationReferences, Owner, Patch,
  ReserveNow, Role, Session, StartSession, StopSession, Tariff, Token, UnlockConnector, VersionDetails, CancelReservation,
} from './canonical.ts';
import type { OcpiVersion } from './version.ts';
import type { WithVersionFields } from './version-fields.ts';

/** A body in the adapter's version, already validated against adapter.schemaId(<object>) (the translation relies on its shape). */
export type Wire = unknown;
/** A body to send in the adapter's version (JSON-serializable). */
export type WireOut = object;

export type LocationPatch = Patch<WithVersionFields<Location>>;
export type SessionPatch = Patch<WithVersionFields<Session>>;

/**
 * One OCPI version's translation. "In" functions take a partner's validated body and return the
 * canonical object (they may throw a HubError for a body valid in its version that the canonical form
 * cannot hold, e.g. a session without its EVSE); "Out" functions take a canonical object and return the
 * body for a partner of this version (they throw NotRepresentableError when it cannot be written without
 * inventing data: the caller skips that delivery). Pure: no I/O, inputs are never mutated.
 */
export interface VersionAdapter {
  readonly version: OcpiVersion;
  /** The schemas/ id to validate this version's `object` with, e.g. 'location' -> 'ocpi-2.1.1/location.json'. */
  schemaId(object: string): string;
  /** Whether the version has this command (2.1.1 has no CANCEL_RESERVATION). */
  supportsCommand(type: CommandType): boolean;

  locationIn(location: Wire, owner: Owner): WithVersionFields<Location>;
  evseIn(evse: Wire): Evse;
  connectorIn(connector: Wire): Connector;
  locationPatchIn(patch: Wire): LocationPatch;
  evsePatchIn(patch: Wire): Patch<Evse>;
  connectorPatchIn(patch: Wire): Patch<Connector>;
  tariffIn(tariff: Wire, owner: Owner): Tariff;
  tokenIn(token: Wire, owner: Owner): Token;
  tokenPatchIn(patch: Wire): Patch<Token>;
  /** cdrToken: the caller's resolution of the version's driver reference (cdrTokenFromAuthId for 2.1.1); 2.2.1 carries its own. */
  sessionIn(session: Wire, owner: Owner, cdrToken: CdrToken): WithVersionFields<Session>;
  sessionPatchIn(patch: Wire, cdrToken?: CdrToken): SessionPatch;
  cdrIn(cdr: Wire, owner: Owner, cdrToken: CdrToken): WithVersionFields<Cdr>;
  /**
   * token: the canonical Token the authorization was asked for, set where the answer carries none
   * (a 2.1.1 one never does); undefined only for a caller whose version has no token (2.1.1).
   */
  authorizationInfoIn(info: Wire, token: Token | undefined): AuthorizationInfo;
  locationReferencesIn(references: Wire): LocationReferences;
  startSessionIn(command: Wire, owner: Owner): StartSession;
  reserveNowIn(command: Wire, owner: Owner): ReserveNow;
  stopSessionIn(command: Wire): StopSession;
  unlockConnectorIn(command: Wire): UnlockConnector;
  /** timeout: the seconds the hub waits for the command's result (2.2.1 requires it in the response). */
  commandResponseIn(response: Wire, timeout: number): CommandResponse;
  /** What a CPO POSTs to the response_url. */
  commandResultIn(result: Wire): CommandResult;
  /** role: the role the party is registered with (versions before 2.2 carry none). */
  credentialsIn(credentials: Wire, role: Role): Credentials;
  /** partyRole: the partner's registered role (versions before 2.2 name no interface roles). */
  versionDetailsIn(details: Wire, partyRole: 'CPO' | 'EMSP'): VersionDetails;

  locationOut(location: WithVersionFields<Location>): WireOut;
  evseOut(evse: Evse): WireOut;
  connectorOut(connector: Connector): WireOut;
  locationPatchOut(patch: LocationPatch): WireOut;
  evsePatchOut(patch: Patch<Evse>): WireOut;
  connectorPatchOut(patch: Patch<Connector>): WireOut;
  tariffOut(tariff: Tariff): WireOut;
  tokenOut(token: Token): WireOut;
  tokenPatchOut(patch: Patch<Token>): WireOut;
  /** location: the canonical Location the caller read for the session (undefined when unknown). */
  sessionOut(session: WithVersionFields<Session>, location: Location | undefined): WireOut;
  sessionPatchOut(patch: SessionPatch, location?: Location): WireOut;
  cdrOut(cdr: WithVersionFields<Cdr>, location?: Location): WireOut;
  authorizationInfoOut(info: AuthorizationInfo): WireOut;
  locationReferencesOut(references: LocationReferences): WireOut;
  startSessionOut(command: StartSession): WireOut;
  stopSessionOut(command: StopSession): WireOut;
  reserveNowOut(command: ReserveNow): WireOut;
  unlockConnectorOut(command: UnlockConnector): WireOut;
  /** Only where supportsCommand('CANCEL_RESERVATION'). */
  cancelReservationOut(command: CancelReservation): WireOut;
  commandResponseOut(response: CommandResponse): WireOut;
  /** The body POSTed to an eMSP's response_url. */
  commandResultOut(result: CommandResult): WireOut;
  /** The hub's own Credentials for a partner of this version. */
  credentialsOut(credentials: Credentials): WireOut;
  /** The hub's version details as a partner of `partyRole` reads them. */
  versionDetailsOut(details: VersionDetails, partyRole: 'CPO' | 'EMSP'): WireOut;
}
