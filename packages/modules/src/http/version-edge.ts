import { HubError, type OcpiVersion } from '@hub/ocpi';
import { adapterFor, cdrTokenFromAuthId, isNotRepresentable, withoutVersionFields, HUB_VERSION_FIELDS, type CdrToken, type Owner, type Token, type VersionAdapter } from '@hub/versions';
import type { SchemaValidator } from '@hub/schemas';
import { validateBody, type OcpiBodies } from './ocpi-objects.ts';

// The ingress's translating edge (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md):
// a route is declared once and handles canonical (2.2.1) objects; the edge of the caller's version
// validates a body against that version's schema and translates it in, and translates what the route
// answers out. Events and read models never see another version's form.

/** The objects a partner pushes or pulls through the object routes. */
export type EdgeObject = 'location' | 'evse' | 'connector' | 'tariff' | 'token';

export interface VersionEdge {
  readonly version: OcpiVersion;
  /** The body validated against the version's schema, as the canonical object (or PATCH). */
  objectIn(object: EdgeObject, body: unknown, partial: boolean, owner: Owner): Record<string, unknown>;
  /** A stored canonical document as a partner of this version reads it; undefined when it cannot be written in the version. */
  objectOut(object: EdgeObject, document: Record<string, unknown>): Record<string, unknown> | undefined;
  /** Serialized documents as this version reads them (pulls): the same strings where nothing changes. */
  listOut(object: EdgeObject, documentsJson: readonly string[]): string[];
  /**
   * A CPO's Session (or PATCH) or CDR as the canonical object. A version that names the driver only by
   * auth_id (2.1.1) has it resolved to a cdr_token through `tokens` (docs/reference/version-mapping.md,
   * Routing without cdr_token). One that resolves to no eMSP is accepted with a cdr_token naming the
   * hub itself: its delivery is parked as unroutable and attributed again when re-driven (the
   * dispatcher's delivery-attribution.ts); a PATCH's unresolved auth_id leaves the session's eMSP as it is.
   */
  chargingIn(object: 'session' | 'cdr', body: unknown, partial: boolean, owner: Owner, tokens: TokensByContractId): Promise<Record<string, unknown>>;
  /** A stored canonical CDR as this version's CPO reads it back. */
  cdrOut(document: Record<string, unknown>): Record<string, unknown> | undefined;
}

/** The tokens of eMSPs routed to the CPO whose contract_id is this one, ordered by eMSP. */
export type TokensByContractId = (contractId: string) => Promise<ReadonlyArray<Record<string, unknown>>>;

/**
 * The cdr_token of a 2.1.1 auth_id, in a documented order: the token an eMSP routed to the CPO pushed
 * with that contract_id (the first eMSP by country and party when several did), else the eMSP the
 * eMA-ID names (ISO 15118 contract id prefix), else none (undefined).
 */
async function resolveAuthId(authId: string, tokens: TokensByContractId): Promise<CdrToken | undefined> {
  const [known] = await tokens(authId);
  const resolution = cdrTokenFromAuthId(authId, known as Token | undefined);
  return resolution.how === 'unresolved' ? undefined : resolution.cdrToken;
}

/**
 * The cdr_token of an auth_id the hub cannot attribute yet: it names the hub itself (no eMSP is
 * named falsely, and the record stays a valid 2.2.1 object in its topic), uid and contract_id the
 * auth_id as sent (docs/reference/version-mapping.md, Routing without cdr_token).
 */
export function unattributedCdrToken(authId: string, hub: Owner): CdrToken {
  return { country_code: hub.countryCode, party_id: hub.partyId, uid: authId, type: 'OTHER', contract_id: authId };
}

type In = (a: VersionAdapter, body: unknown, owner: Owner) => unknown;
const fullIn: Record<EdgeObject, In> = {
  location: (a, b, o) => a.locationIn(b, o),
  evse: (a, b) => a.evseIn(b),
  connector: (a, b) => a.connectorIn(b),
  tariff: (a, b, o) => a.tariffIn(b, o),
  token: (a, b, o) => a.tokenIn(b, o),
};
const patchIn: Record<EdgeObject, In> = {
  location: (a, b) => a.locationPatchIn(b),
  evse: (a, b) => a.evsePatchIn(b),
  connector: (a, b) => a.connectorPatchIn(b),
  tariff: () => {
    throw new HubError('METHOD_NOT_ALLOWED');
  },
  token: (a, b) => a.tokenPatchIn(b),
};
/** A whole Session or CDR of the version, with the cdr_token it names or was resolved to. */
type ChargingIn = (a: VersionAdapter, document: object, owner: Owner, cdrToken: CdrToken) => object;
const chargingFullIn: Record<'session' | 'cdr', ChargingIn> = {
  session: (a, d, o, t) => a.sessionIn(d, o, t),
  cdr: (a, d, o, t) => a.cdrIn(d, o, t),
};
type Out = (a: VersionAdapter, document: never) => object;
const fullOut: Record<EdgeObject, Out> = {
  location: (a, d) => a.locationOut(d),
  evse: (a, d) => a.evseOut(d),
  connector: (a, d) => a.connectorOut(d),
  tariff: (a, d) => a.tariffOut(d),
  token: (a, d) => a.tokenOut(d),
};

/** 2.2.1 is the canonical form: bodies are validated as they always were, and the hub-private member never leaves. */
function canonicalEdge(validator: SchemaValidator): VersionEdge {
  return {
    version: '2.2.1',
    objectIn: (object, body, partial) => validateBody(validator, `ocpi/${object}.json`, body, partial) as Record<string, unknown>,
    // What a module's 2.2.1 readers are not shown it leaves out itself (a tax-inclusive 2.3.0 tariff:
    // tariffs/routes.ts).
    objectOut: (_object, document) => withoutVersionFields(document),
    // Most documents carry no hub-private member: the string is checked before anything is parsed.
    listOut: (_object, documentsJson) =>
      documentsJson.map((json) => (json.includes(`"${HUB_VERSION_FIELDS}"`) ? JSON.stringify(withoutVersionFields(JSON.parse(json) as object)) : json)),
    chargingIn: async (object, body, partial) => validateBody(validator, `ocpi/${object}.json`, body, partial) as Record<string, unknown>,
    cdrOut: (document) => withoutVersionFields(document),
  };
}

/**
 * A 2.1.1 PATCH need not carry last_updated (mod_locations.md 2.2.3 and mod_sessions.md 2.2.2: "only the
 * fields/objects that have to be updated have to be present"): the hub stamps the time it received it,
 * which orders the update (docs/decisions/0001-newest-state-wins.md).
 */
function stampedIn211(body: unknown, partial: boolean): unknown {
  const open = partial && body !== null && typeof body === 'object' && !Array.isArray(body) && !('last_updated' in body);
  return open ? { ...body, last_updated: new Date().toISOString() } : body;
}

/** Removes `member` from the object at JSON Pointer `path` inside `root`. */
function removeMember(root: Record<string, unknown>, path: string, member: string): void {
  let at: unknown = root;
  for (const segment of path.split('/').slice(1).filter((p) => p !== '')) {
    if (at === null || typeof at !== 'object') return;
    at = (at as Record<string, unknown>)[segment.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  if (at !== null && typeof at === 'object' && !Array.isArray(at)) delete (at as Record<string, unknown>)[member];
}

/**
 * 2.3.0 is laxer than 2.2.1 in places the adapter passes through (a Location address 255 long, not 45:
 * ocpi-2.3.0/mod_locations.asciidoc, Location object; a ConnectorType 2.2.1 lacks in a cdr_location;
 * an EMAID cdr_token and a long plain_data are translated by the adapter, v2.3.0/charging.ts): what the
 * canonical form cannot hold is refused (2001) rather than put on the topic for 2.2.1 readers to refuse
 * in turn (docs/reference/version-mapping.md, OCPI 2.3.0). Except an undocumented member: a platform
 * "SHALL NOT reject request or response payloads based on the presence of JSON object field names that
 * are not documented" (ocpi-2.3.0/transport_and_format.asciidoc, Non-specified JSON fields). The
 * adapter keeps those of the object itself, its EVSEs and Connectors for 2.3.0 readers; one nested
 * deeper (in coordinates, images, a price component) has no place in the canonical form and is dropped.
 */
function canonicalChecked(validator: SchemaValidator, version: OcpiVersion, canonical: Record<string, unknown>, object: EdgeObject | 'session' | 'cdr', partial: boolean): Record<string, unknown> {
  if (version !== '2.3.0') return canonical;
  const schema = `ocpi/${object}.json` as const;
  const check = () => (partial ? validator.validatePartial(schema, withoutVersionFields(canonical)) : validator.validate(schema, withoutVersionFields(canonical))).violations;
  let violations = check();
  // Until none is left: violations at one path are told apart by a message that shortens long names.
  for (let round = 0; round < 16 && violations.length > 0; round++) {
    const undocumented = violations.filter((v) => v.member !== undefined && v.path !== '/');
    if (undocumented.length === 0) break;
    for (const v of undocumented) removeMember(canonical, v.path, v.member ?? '');
    violations = check();
  }
  // What is left is refused as any body is (2001 naming each violation).
  if (violations.length > 0) validateBody(validator, schema, withoutVersionFields(canonical), partial);
  return canonical;
}

function translatingEdge(validator: SchemaValidator, version: Exclude<OcpiVersion, '2.2.1'>, hub: Owner): VersionEdge {
  const adapter = adapterFor(version);
  // 2.3.0, like 2.2.1, requires last_updated in every PATCH (ocpi-2.3.0/mod_locations.asciidoc, PATCH Method): only 2.1.1's is stamped.
  const stamped = version === '2.1.1' ? stampedIn211 : (body: unknown) => body;
  const objectOut = (object: EdgeObject, document: Record<string, unknown>): Record<string, unknown> | undefined => {
    try {
      return fullOut[object](adapter, document as never) as Record<string, unknown>;
    } catch (e) {
      // An object this version cannot carry without invented data is not shown to its readers
      // (docs/reference/version-mapping.md, what is lossy).
      if (isNotRepresentable(e)) return undefined;
      throw e;
    }
  };
  return {
    version,
    objectIn(object, body, partial, owner) {
      const document = validateBody(validator, adapter.schemaId(object) as keyof OcpiBodies, stamped(body, partial), partial);
      return canonicalChecked(validator, version, (partial ? patchIn : fullIn)[object](adapter, document, owner) as Record<string, unknown>, object, partial);
    },
    objectOut,
    async chargingIn(object, body, partial, owner, tokens) {
      const document = validateBody(validator, adapter.schemaId(object) as keyof OcpiBodies, stamped(body, partial), partial) as { auth_id?: string; cdr_token?: CdrToken };
      // Since 2.2 a Session and CDR carry their cdr_token (mod_sessions.asciidoc, Session object): only 2.1.1 names the driver by auth_id.
      if (version !== '2.1.1') {
        const canonical = partial ? adapter.sessionPatchIn(document, document.cdr_token) : chargingFullIn[object](adapter, document, owner, document.cdr_token as CdrToken);
        return canonicalChecked(validator, version, canonical as Record<string, unknown>, object, partial);
      }
      const authId = document.auth_id;
      const resolved = typeof authId === 'string' ? await resolveAuthId(authId, tokens) : undefined;
      if (partial) return adapter.sessionPatchIn(document, resolved);
      // The version's schema requires auth_id in a whole Session or CDR (mod_sessions.md 3.1, mod_cdrs.md 3.1).
      if (authId === undefined) throw new HubError('INVALID_PARAMETERS', { detail: 'auth_id is required' });
      const cdrToken = resolved ?? unattributedCdrToken(authId, hub);
      return chargingFullIn[object](adapter, document, owner, cdrToken) as Record<string, unknown>;
    },
    cdrOut(document) {
      try {
        return adapter.cdrOut(document as never) as Record<string, unknown>;
      } catch (e) {
        if (isNotRepresentable(e)) return undefined;
        throw e;
      }
    },
    listOut: (object, documentsJson) =>
      documentsJson.flatMap((json) => {
        const out = objectOut(object, JSON.parse(json) as Record<string, unknown>);
        return out ? [JSON.stringify(out)] : [];
      }),
  };
}

/** hub: the hub's own party, which an unattributed driver token names (unattributedCdrToken). */
export function versionEdges(validator: SchemaValidator, hub: Owner): Readonly<Record<OcpiVersion, VersionEdge>> {
  return { '2.2.1': canonicalEdge(validator), '2.1.1': translatingEdge(validator, '2.1.1', hub), '2.3.0': translatingEdge(validator, '2.3.0', hub) };
}
