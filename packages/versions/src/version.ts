// The OCPI versions the hub speaks with partners. Events and read models hold one canonical form (the
// 2.2.1 object, docs/decisions/0008-one-canonical-form-translated-at-the-edge.md); every other version
// is translated at the edge by its adapter.

/** An OCPI version the hub has an adapter for. */
export type OcpiVersion = '2.1.1' | '2.2.1';

/** Every supported version, newest first (the order the hub offers them in, version_information_endpoint.md). */
export const SUPPORTED_VERSIONS: readonly OcpiVersion[] = ['2.2.1', '2.1.1'];

/** The version whose objects are the canonical form. */
export const CANONICAL_VERSION: OcpiVersion = '2.2.1';

export function isOcpiVersion(value: unknown): value is OcpiVersion {
  return typeof value === 'string' && (SUPPORTED_VERSIONS as readonly string[]).includes(value);
}

/** The version a string names (a URL segment, a registry field), or undefined when the hub speaks no such version. */
export function parseOcpiVersion(value: unknown): OcpiVersion | undefined {
  return isOcpiVersion(value) ? value : undefined;
}

/** The schema id (schemas/, as SchemaValidator.validate takes it) of one OCPI object in one version: ocpi/ is 2.2.1. */
export function schemaId(version: OcpiVersion, object: string): string {
  return version === CANONICAL_VERSION ? `ocpi/${object}.json` : `ocpi-${version}/${object}.json`;
}
