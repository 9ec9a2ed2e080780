// The path of an OCPI object an event is about (its subject; @hub/modules, object-events.ts): a
// location, tariff, token, session or CDR by country code, party id and id; an EVSE or connector below
// a location.
export interface ObjectPath {
  readonly countryCode: string;
  readonly partyId: string;
  readonly id: string;
  readonly evseUid?: string;
  readonly connectorId?: string;
}
