// The canonical form: the OCPI 2.2.1 objects as schemas/ocpi/*.json define them (the generated types).
export type { Location, Hours, EnergyMix, PublishTokenType } from '@hub/schemas/generated/ocpi/location';
export type { Evse } from '@hub/schemas/generated/ocpi/evse';
export type { Connector } from '@hub/schemas/generated/ocpi/connector';
export type { Tariff, TariffElement, TariffRestrictions } from '@hub/schemas/generated/ocpi/tariff';
export type { Token } from '@hub/schemas/generated/ocpi/token';
export type { Session, ChargingPeriod, CdrDimension } from '@hub/schemas/generated/ocpi/session';
export type { Cdr, CdrLocation } from '@hub/schemas/generated/ocpi/cdr';
export type { CdrToken } from '@hub/schemas/generated/ocpi/cdr_token';
export type { AuthorizationInfo } from '@hub/schemas/generated/ocpi/authorization_info';
export type { LocationReferences } from '@hub/schemas/generated/ocpi/location_references';
export type { CommandResponse } from '@hub/schemas/generated/ocpi/command_response';
export type { CommandResult } from '@hub/schemas/generated/ocpi/command_result';
export type { StartSession } from '@hub/schemas/generated/ocpi/start_session';
export type { StopSession } from '@hub/schemas/generated/ocpi/stop_session';
export type { ReserveNow } from '@hub/schemas/generated/ocpi/reserve_now';
export type { UnlockConnector } from '@hub/schemas/generated/ocpi/unlock_connector';
export type { CancelReservation } from '@hub/schemas/generated/ocpi/cancel_reservation';
export type { Credentials } from '@hub/schemas/generated/ocpi/credentials';
export type { VersionDetails } from '@hub/schemas/generated/ocpi/version_details';
/** types.asciidoc, Role enum. */
export type Role = 'CPO' | 'EMSP' | 'HUB' | 'NAP' | 'NSP' | 'OTHER' | 'SCSP';

/** mod_commands.asciidoc, CommandType enum. */
export type CommandType = 'CANCEL_RESERVATION' | 'RESERVE_NOW' | 'START_SESSION' | 'STOP_SESSION' | 'UNLOCK_CONNECTOR';

/**
 * The party that sent an object, from its credentials: objects of versions before 2.2 carry no
 * country_code and party_id of their own (credentials.md 2.1; transport_and_format.md, client owned objects).
 */
export interface Owner {
  readonly countryCode: string;
  readonly partyId: string;
}

/** A PATCH of T: any subset of its fields, null removing an optional one (mod_locations.asciidoc, PATCH Method). */
export type Patch<T> = { [K in keyof T]?: T[K] | null };
