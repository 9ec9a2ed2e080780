// @hub/versions: the OCPI version translation layer, pure (no I/O). Events and read models hold one
// canonical form, the OCPI 2.2.1 object (schemas/ocpi/*.json) plus one hub-private member,
// hub_version_fields, that keeps what another version sent and 2.2.1 has no field for
// (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md). The edge translates:
//
//   const adapter = adapterFor(partner.version);
//   validator.validate(adapter.schemaId('location'), body)   // the partner's version's schema first
//   const location = adapter.locationIn(document, owner);      // -> canonical, owner from the credentials
//   ...
//   adapter.locationOut(location)                              // canonical -> the receiver's version
//
// Each version is one adapter (src/v<version>/, one file per module) implementing VersionAdapter;
// 2.2.1 is the identity but for removing the hub-private member. A new version is one more folder and
// one more entry in ADAPTERS. The field-by-field table: docs/reference/version-mapping.md.
import type { VersionAdapter } from './adapter.ts';
import { v211 } from './v2.1.1/index.ts';
import { v221 } from './v2.2.1/index.ts';
import { v230 } from './v2.3.0/index.ts';
import type { OcpiVersion } from './version.ts';

export * from './version.ts';
export * from './adapter.ts';
export * from './errors.ts';
export * from './version-fields.ts';
export type * from './canonical.ts';
export { v230, priceIn, priceOut, priceLimitIn, priceLimitOut, pricesExcludeTaxes, type Price230, type TaxAmount } from './v2.3.0/index.ts';
export { cdrTokenFromAuthId, parseEmaId, type CdrTokenResolution, type EmaId, type Ocpi211 } from './v2.1.1/index.ts';

const ADAPTERS: Readonly<Record<OcpiVersion, VersionAdapter>> = { '2.1.1': v211, '2.2.1': v221, '2.3.0': v230 };

/** The adapter of a supported version. */
export function adapterFor(version: OcpiVersion): VersionAdapter {
  return ADAPTERS[version];
}
