// The OCPI versions the hub speaks with partners (@hub/ocpi, OCPI_VERSIONS). Events and read models
// hold one canonical form (the 2.2.1 object, docs/decisions/0008-one-canonical-form-translated-at-the-edge.md);
// every other version is translated at the edge by its adapter.
import { isOcpiVersion, OCPI_VERSION, OCPI_VERSIONS, type OcpiVersion } from '@hub/ocpi';

export { isOcpiVersion, type OcpiVersion };

/** Every supported version, newest first (the order the hub offers them in, version_information_endpoint.md). */
export const SUPPORTED_VERSIONS: readonly OcpiVersion[] = [...OCPI_VERSIONS].reverse();

/** The version whose objects are the canonical form. */
export const CANONICAL_VERSION: OcpiVersion = OCPI_VERSION;

/** The version a string names (a URL segment, a registry field), or undefined when the hub speaks no such version. */
export function parseOcpiVersion(value: unknown): OcpiVersion | undefined {
  return isOcpiVersion(value) ? value : undefined;
}

/** The schema id (schemas/, as SchemaValidator.validate takes it) of one OCPI object in one version: ocpi/ is 2.2.1. */
export function schemaId(version: OcpiVersion, object: string): string {
  return version === CANONICAL_VERSION ? `ocpi/${object}.json` : `ocpi-${version}/${object}.json`;
}
