// The OCPI 2.2.1 adapter: the canonical form is the 2.2.1 object, so "in" is the object itself and
// "out" only removes the hub-private member (withoutVersionFields: no copy when it is absent, which is
// every object a 2.2.1 partner sent).
import type { VersionAdapter } from '../adapter.ts';
import type { Token } from '../canonical.ts';
import { schemaId } from '../version.ts';
import { NotRepresentableError } from '../errors.ts';
import { pricesExcludeTaxes } from '../v2.3.0/prices.ts';
import { withoutVersionFields } from '../version-fields.ts';

const same = <T>(object: unknown): T => object as T;
const strip = <T extends object>(object: T): T => withoutVersionFields(object);

export const v221: VersionAdapter = {
  version: '2.2.1',
  schemaId: (object) => schemaId('2.2.1', object),
  supportsCommand: () => true,
  locationIn: same, evseIn: same, connectorIn: same, locationPatchIn: same, evsePatchIn: same, connectorPatchIn: same,
  tariffIn: same, tokenIn: same, tokenPatchIn: same, sessionIn: same, sessionPatchIn: same, cdrIn: same,
  authorizationInfoIn: (info, token) => withAskedToken(info, token), locationReferencesIn: same,
  startSessionIn: same, reserveNowIn: same, stopSessionIn: same, unlockConnectorIn: same, commandResponseIn: same, commandResultIn: same,
  credentialsIn: same, versionDetailsIn: same,
  locationOut: strip, evseOut: strip, connectorOut: strip, locationPatchOut: strip, evsePatchOut: strip, connectorPatchOut: strip,
  tariffOut: (tariff) => strip(tariffExclTaxes(tariff, '2.2.1')), tokenOut: strip, tokenPatchOut: strip, sessionOut: (session) => strip(session), sessionPatchOut: (patch) => strip(patch), cdrOut: (cdr) => strip(cdr),
  authorizationInfoOut: strip, locationReferencesOut: strip,
  startSessionOut: strip, stopSessionOut: strip, reserveNowOut: strip, unlockConnectorOut: strip, cancelReservationOut: strip,
  commandResponseOut: strip, commandResultOut: strip, credentialsOut: strip, versionDetailsOut: (details) => strip(details),
};

/** A Tariff from a 2.3.0 CPO whose prices include taxes at no given rate has no 2.2.1 form (v2.3.0/prices.ts pricesExcludeTaxes). */
export function tariffExclTaxes<T extends { id: string }>(tariff: T, version: '2.1.1' | '2.2.1'): T {
  if (!pricesExcludeTaxes(tariff)) throw new NotRepresentableError(version, 'Tariff', `${tariff.id}: prices include taxes of an unknown rate (OCPI 2.3.0 tax_included YES without vat)`);
  return tariff;
}

/**
 * A 2.2.1 or 2.3.0 AuthorizationInfo requires its Token (mod_tokens.asciidoc, AuthorizationInfo object):
 * an answer without one gets the Token asked about (the caller's, from the hub's read model).
 */
export function withAskedToken<T>(info: unknown, token: Token | undefined): T {
  const answer = info as { token?: unknown };
  if (answer.token !== null && typeof answer.token === 'object') return info as T;
  return (token ? { ...answer, token: withoutVersionFields(token) } : info) as T;
}
