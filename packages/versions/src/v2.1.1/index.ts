// The OCPI 2.1.1 adapter: one file per module; the mapping table is docs/reference/version-mapping.md.
import type { VersionAdapter } from '../adapter.ts';
import { NotRepresentableError } from '../errors.ts';
import { tariffExclTaxes } from '../v2.2.1/index.ts';
import { schemaId } from '../version.ts';
import { withoutVersionFields as bare } from '../version-fields.ts';
import { cdrIn, cdrOut } from './cdrs.ts';
import { commandResponseIn, commandResponseOut, commandResultIn, commandResultOut, reserveNowIn, reserveNowOut, startSessionIn, startSessionOut, stopSessionIn, stopSessionOut, supportsCommand, unlockConnectorIn, unlockConnectorOut } from './commands.ts';
import { credentialsIn, credentialsOut, versionDetailsIn, versionDetailsOut } from './credentials.ts';
import { connectorIn, connectorOut, connectorPatchIn, connectorPatchOut, evseIn, evseOut, evsePatchIn, evsePatchOut } from './evses.ts';
import { locationIn, locationOut, locationPatchIn, locationPatchOut } from './locations.ts';
import { sessionIn, sessionOut, sessionPatchIn, sessionPatchOut } from './sessions.ts';
import { tariffIn, tariffOut } from './tariffs.ts';
import { authorizationInfoIn, authorizationInfoOut, locationReferencesIn, locationReferencesOut, tokenIn, tokenOut, tokenPatchIn, tokenPatchOut } from './tokens.ts';

export * from './cdr-token.ts';
export type * as Ocpi211 from './types.ts';

export const v211: VersionAdapter = {
  version: '2.1.1',
  schemaId: (object) => schemaId('2.1.1', object),
  supportsCommand,
  locationIn, evseIn, connectorIn, locationPatchIn, evsePatchIn, connectorPatchIn,
  tariffIn, tokenIn, tokenPatchIn, sessionIn, sessionPatchIn, cdrIn,
  authorizationInfoIn, locationReferencesIn,
  startSessionIn, reserveNowIn, stopSessionIn, unlockConnectorIn, commandResponseIn, commandResultIn,
  credentialsIn, versionDetailsIn,
  // A standalone EVSE, Connector, Tariff or Token from a 2.3.0 partner carries the hub-private member (v2.3.0/index.ts).
  locationOut, evseOut: (evse) => evseOut(bare(evse)), connectorOut: (connector) => connectorOut(bare(connector)), locationPatchOut, evsePatchOut, connectorPatchOut,
  tariffOut: (tariff) => tariffOut(bare(tariffExclTaxes(tariff, '2.1.1'))), tokenOut: (token) => tokenOut(bare(token)), tokenPatchOut, sessionOut, sessionPatchOut, cdrOut,
  authorizationInfoOut, locationReferencesOut,
  startSessionOut, stopSessionOut, reserveNowOut, unlockConnectorOut,
  cancelReservationOut: () => {
    throw new NotRepresentableError('2.1.1', 'CancelReservation', 'OCPI 2.1.1 has no CANCEL_RESERVATION (mod_commands.md 4.2)');
  },
  commandResponseOut, commandResultOut, credentialsOut, versionDetailsOut,
};
