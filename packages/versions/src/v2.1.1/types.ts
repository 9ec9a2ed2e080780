// The OCPI 2.1.1 objects as schemas/ocpi-2.1.1/*.json define them (the generated types).
export type { Location, Hours, EnergyMix } from '@hub/schemas/generated/ocpi-2.1.1/location';
export type { Evse } from '@hub/schemas/generated/ocpi-2.1.1/evse';
export type { Connector } from '@hub/schemas/generated/ocpi-2.1.1/connector';
export type { Tariff, TariffElement } from '@hub/schemas/generated/ocpi-2.1.1/tariff';
export type { Token } from '@hub/schemas/generated/ocpi-2.1.1/token';
export type { Session, ChargingPeriod } from '@hub/schemas/generated/ocpi-2.1.1/session';
export type { Cdr } from '@hub/schemas/generated/ocpi-2.1.1/cdr';
export type { AuthorizationInfo } from '@hub/schemas/generated/ocpi-2.1.1/authorization_info';
export type { LocationReferences } from '@hub/schemas/generated/ocpi-2.1.1/location_references';
export type { CommandResponse } from '@hub/schemas/generated/ocpi-2.1.1/command_response';
export type { StartSession } from '@hub/schemas/generated/ocpi-2.1.1/start_session';
export type { StopSession } from '@hub/schemas/generated/ocpi-2.1.1/stop_session';
export type { ReserveNow } from '@hub/schemas/generated/ocpi-2.1.1/reserve_now';
export type { UnlockConnector } from '@hub/schemas/generated/ocpi-2.1.1/unlock_connector';
export type { Credentials } from '@hub/schemas/generated/ocpi-2.1.1/credentials';
export type { VersionDetails } from '@hub/schemas/generated/ocpi-2.1.1/version_details';
