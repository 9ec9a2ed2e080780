import { newEvent, registryEventTypes, topics } from '@hub/events';
import { HubError, OCPI_VERSION, generateCredentialsToken, hashCredentialsToken, partyKey, sameParty, type OcpiVersion, type PartnerRole, type PartyRef, type PartyRole } from '@hub/ocpi';
import type { Credentials } from '@hub/schemas/generated/ocpi/credentials';
import { PartnerCallError, type Caller, type OutboxEvent, type PartnerDirectory, type PartnerEndpoint, type RegistryStore, type RequestIds, type TokenCipher } from '@hub/core';
import { endpointRoleIn211 } from './versions.ts';

// Credentials module, OCPI 2.2.1 credentials.asciidoc. The hub is the Receiver of the registration:
// the partner POSTs with the initial token (CREDENTIALS_TOKEN_A); the hub fetches the partner's
// versions and details with the partner's token (CREDENTIALS_TOKEN_B) and answers with its own new
// token (CREDENTIALS_TOKEN_C). PUT re-fetches endpoints and rotates; DELETE unregisters.
//
// The exchange runs in the version whose credentials URL the partner called (2.1.1 credentials.md
// has the same flow); a PUT under another version the operator allowed switches the platform to it
// (credentials.asciidoc, Upgrading to a newer version). The body arrives here in 2.2.1 form: the
// version's edge translated it (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md).

export interface HubIdentity {
  readonly countryCode: string;
  readonly partyId: string;
  readonly name: string;
  /** The hub's public versions URL, given to partners in the credentials answer. */
  readonly versionsUrl: string;
}

/** Credentials object (credentials.asciidoc, Credentials object), as validated by its schema. */
export type CredentialsBody = Credentials;

export interface CredentialsDeps {
  readonly store: RegistryStore;
  readonly partners: PartnerDirectory;
  readonly cipher: TokenCipher;
  readonly hub: HubIdentity;
  /** ce_source of the audit events. */
  readonly source: string;
}

/** A CredentialsRole of the hub's answer: the hub itself, or (2.3.0) a party reachable through it. */
export interface HubCredentialsRole {
  readonly role: 'HUB' | PartnerRole;
  readonly party_id: string;
  readonly country_code: string;
  readonly business_details: { readonly name: string };
}

export interface HubCredentials {
  readonly token: string;
  readonly url: string;
  /** The HUB role first; in 2.3.0 the reachable parties after it (withReachableParties). */
  readonly roles: readonly HubCredentialsRole[];
}

/**
 * The parties reachable through the hub for a caller: each party an enabled routing rule pairs with one
 * of the caller's (an eMSP's CPOs, a CPO's eMSPs), except suspended ones, by country code, party id and
 * role. OCPI 2.3.0 has the hub list them among its roles (ocpi-2.3.0/credentials.asciidoc, Credentials
 * object, NOTE); its own parties are not reached through the hub. Pure.
 */
export function reachableParties(
  callerParties: readonly PartyRole[],
  rules: ReadonlyArray<{ emsp: PartyRef; cpo: PartyRef; enabled: boolean }>,
  parties: ReadonlyArray<PartyRole & { name: string; suspended: boolean }>,
): HubCredentialsRole[] {
  const mine = (role: PartnerRole, ref: PartyRef) => callerParties.some((p) => p.role === role && sameParty(p, ref));
  const routed = (p: PartyRole) =>
    rules.some((r) => r.enabled && (p.role === 'CPO' ? sameParty(p, r.cpo) && mine('EMSP', r.emsp) : sameParty(p, r.emsp) && mine('CPO', r.cpo)));
  return parties
    .filter((p) => !p.suspended && !callerParties.some((c) => c.role === p.role && sameParty(c, p)) && routed(p))
    .map((p) => ({ role: p.role, country_code: p.countryCode, party_id: p.partyId, business_details: { name: p.name } }))
    .sort((a, b) => `${a.country_code}/${a.party_id}/${a.role}`.localeCompare(`${b.country_code}/${b.party_id}/${b.role}`));
}

/** The hub's credentials with the parties reachable through it for this caller after the HUB role (2.3.0, reachableParties). */
export async function withReachableParties(store: Pick<RegistryStore, 'listParties' | 'listRoutingRules'>, caller: Caller, credentials: HubCredentials): Promise<HubCredentials> {
  const [rules, parties] = await Promise.all([store.listRoutingRules(), store.listParties()]);
  return { ...credentials, roles: [...credentials.roles, ...reachableParties(caller.parties, rules, parties)] };
}

function hubCredentials(hub: HubIdentity, token: string): HubCredentials {
  // credentials.asciidoc (Credentials object): "A Hub SHALL only report itself as role: Hub".
  return {
    token,
    url: hub.versionsUrl,
    roles: [{ role: 'HUB', party_id: hub.partyId, country_code: hub.countryCode, business_details: { name: hub.name } }],
  };
}

/** The roles in the body must be exactly the parties registered for these credentials. */
function checkRoles(caller: Caller, body: CredentialsBody): void {
  const registered = new Set(caller.parties.map((p) => `${partyKey(p)}/${p.role}`));
  const claimed = new Set(body.roles.map((r) => `${partyKey({ countryCode: r.country_code, partyId: r.party_id })}/${r.role}`));
  const foreign = [...claimed].filter((k) => !registered.has(k));
  const missing = [...registered].filter((k) => !claimed.has(k));
  if (foreign.length > 0 || missing.length > 0 || claimed.size !== body.roles.length) {
    throw new HubError('INVALID_PARAMETERS', {
      detail: 'roles must be exactly the parties registered for these credentials',
      data: { registered: [...registered], not_registered: foreign, missing },
    });
  }
}

/**
 * Fetches the partner's versions, picks the version of the exchange and fetches its endpoints
 * (credentials.asciidoc, POST/PUT). 2.2.1 endpoints name their role; 2.1.1 endpoints have none, and
 * get the one their module has on the partner's side (versions.ts, endpointRoleIn211).
 */
async function discoverPartner(
  deps: CredentialsDeps,
  caller: Caller,
  body: CredentialsBody,
  version: OcpiVersion,
  ids: RequestIds,
): Promise<{ detailsUrl: string; endpoints: PartnerEndpoint[] }> {
  try {
    const versions = await deps.partners.fetchVersions(body.url, body.token, ids, version);
    const listed = versions.find((v) => v.version === version);
    if (!listed) {
      throw new HubError('UNSUPPORTED_VERSION', {
        detail: `the partner's versions endpoint lists ${versions.map((v) => v.version).join(', ') || 'no versions'}, not ${version}`,
      });
    }
    const details = await deps.partners.fetchVersionDetails(listed.url, body.token, ids, version);
    if (details.version !== version) {
      throw new HubError('UNSUPPORTED_VERSION', { detail: `version details are for ${details.version}` });
    }
    // credentials.asciidoc (Required endpoints not available): every OCPI platform implements credentials.
    if (!details.endpoints.some((e) => e.identifier === 'credentials')) {
      throw new HubError('NO_MATCHING_ENDPOINTS', { detail: "the partner's version details list no credentials endpoint" });
    }
    const partyRole = caller.parties[0]?.role ?? 'CPO';
    const endpoints: PartnerEndpoint[] = [];
    for (const e of details.endpoints) {
      if (version === '2.1.1') endpoints.push({ identifier: e.identifier, role: endpointRoleIn211(e.identifier, partyRole), url: e.url });
      else if (e.role) endpoints.push({ identifier: e.identifier, role: e.role, url: e.url });
      // version_information_endpoint.asciidoc, Endpoint class: role is required in 2.2.1.
      else throw new HubError('PARTNER_API_UNUSABLE', { detail: `the partner's ${version} endpoint ${e.identifier} has no role` });
    }
    return { detailsUrl: listed.url, endpoints };
  } catch (e) {
    if (e instanceof PartnerCallError) {
      throw new HubError(e.reason === 'URL_NOT_ALLOWED' ? 'INVALID_PARAMETERS' : 'PARTNER_API_UNUSABLE', {
        detail: e.message,
        cause: e,
      });
    }
    throw e;
  }
}

function credentialsEvent(
  deps: CredentialsDeps,
  caller: Caller,
  type: string,
  data: Record<string, unknown>,
  ids: RequestIds,
): OutboxEvent {
  return {
    topic: topics.registry,
    event: newEvent({
      type,
      source: deps.source,
      subject: caller.platformId,
      key: caller.platformId,
      data: { platform_id: caller.platformId, parties: caller.parties.map(partyJson), ...data },
      correlationId: ids.correlationId,
      ...(ids.requestId ? { requestId: ids.requestId } : {}),
    }),
  };
}

function partyJson(p: { countryCode: string; partyId: string; role: PartnerRole }) {
  return { country_code: p.countryCode, party_id: p.partyId, role: p.role };
}

async function exchange(
  deps: CredentialsDeps,
  caller: Caller,
  body: CredentialsBody,
  ids: RequestIds,
  mode: 'register' | 'update',
  version: OcpiVersion,
): Promise<HubCredentials> {
  if (!caller.versions.includes(version)) throw new HubError('VERSION_NOT_ALLOWED');
  checkRoles(caller, body);
  const { detailsUrl, endpoints } = await discoverPartner(deps, caller, body, version, ids);
  const hubToken = generateCredentialsToken();
  const saved = await deps.store.saveCredentials(
    {
      platformId: caller.platformId,
      presentedTokenHash: caller.tokenHash,
      newHubTokenHash: hashCredentialsToken(hubToken),
      partnerTokenSealed: deps.cipher.seal(body.token),
      versionsUrl: body.url,
      version,
      endpoints,
      businessDetails: body.roles.map((r) => ({ ...partyJson({ countryCode: r.country_code, partyId: r.party_id, role: r.role as PartnerRole }), business_details: r.business_details })),
      outbox: [
        credentialsEvent(
          deps,
          caller,
          mode === 'register' ? registryEventTypes.credentialsRegistered : registryEventTypes.credentialsUpdated,
          { versions_url: body.url, version_details_url: detailsUrl, version, endpoints },
          ids,
        ),
      ],
    },
    mode,
  );
  // The presented token was used up by a concurrent request (e.g. two POSTs with one initial token).
  if (!saved) throw new HubError('AUTH_UNKNOWN_TOKEN');
  return hubCredentials(deps.hub, hubToken);
}

/** POST /ocpi/{version}/credentials: 405 once registered (credentials.asciidoc, POST Method). */
export async function registerCredentials(deps: CredentialsDeps, caller: Caller, body: CredentialsBody, ids: RequestIds, version: OcpiVersion = OCPI_VERSION) {
  if (caller.registered) throw new HubError('ALREADY_REGISTERED');
  return exchange(deps, caller, body, ids, 'register', version);
}

/** PUT /ocpi/{version}/credentials: 405 before registration (credentials.asciidoc, PUT Method). */
export async function updateCredentials(deps: CredentialsDeps, caller: Caller, body: CredentialsBody, ids: RequestIds, version: OcpiVersion = OCPI_VERSION) {
  if (!caller.registered || caller.tokenKind !== 'HUB') throw new HubError('NOT_REGISTERED');
  return exchange(deps, caller, body, ids, 'update', version);
}

/**
 * GET /ocpi/2.2.1/credentials: the hub's credentials for the caller. Only token hashes are stored, so
 * the token in the answer is the one the caller presented, which is by definition its current one.
 */
export function currentCredentials(deps: Pick<CredentialsDeps, 'hub'>, presentedToken: string): HubCredentials {
  return hubCredentials(deps.hub, presentedToken);
}

/** DELETE /ocpi/2.2.1/credentials: 405 before registration (credentials.asciidoc, DELETE Method). */
export async function deleteCredentials(deps: CredentialsDeps, caller: Caller, ids: RequestIds): Promise<void> {
  if (!caller.registered) throw new HubError('NOT_REGISTERED');
  await deps.store.deleteCredentials(caller.platformId, [
    credentialsEvent(deps, caller, registryEventTypes.credentialsDeleted, {}, ids),
  ]);
}
