import { newEvent, registryEventTypes, topics, type HubEvent } from '@hub/events';
import { generateCredentialsToken, hashCredentialsToken, partyKey, type OcpiVersion, type PartyRef, type PartyRole } from '@hub/ocpi';
import type { OutboxEvent, RegistryStore } from '@hub/core';

// Operator use cases behind hubctl (the account team's job, outside the partner API: interface
// document, What the service does 5 and Onboarding sequence (a), (c), (d)). Every change is stored in
// Postgres and, in the same transaction, queued as an audit event for hub.registry.v1.

export interface OperatorDeps {
  readonly store: RegistryStore;
  /** ce_source of the audit events, e.g. "hubctl@host" */
  readonly source: string;
  readonly actor: string;
}

const COUNTRY = /^[A-Z]{2}$/;
const PARTY = /^[A-Z0-9]{3}$/;

export class OperatorInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OperatorInputError';
  }
}

/** Normalises and checks a party reference (types.asciidoc: CiString(2) country, CiString(3) party). */
export function normaliseParty<T extends PartyRef>(p: T): T {
  const countryCode = p.countryCode.toUpperCase();
  const partyId = p.partyId.toUpperCase();
  if (!COUNTRY.test(countryCode)) throw new OperatorInputError(`country_code must be two letters (ISO 3166-1 alpha-2), got "${p.countryCode}"`);
  if (!PARTY.test(partyId)) throw new OperatorInputError(`party_id must be three letters or digits, got "${p.partyId}"`);
  return { ...p, countryCode, partyId };
}

function registryEvent(deps: OperatorDeps, type: string, key: string, data: Record<string, unknown>): OutboxEvent {
  const event: HubEvent = newEvent({ type, source: deps.source, subject: key, key, data: { ...data, actor: deps.actor } });
  return { topic: topics.registry, event };
}

const roleKey = (p: PartyRole) => `${partyKey(p)}/${p.role}`;
const partyJson = (p: PartyRole) => ({ country_code: p.countryCode, party_id: p.partyId, role: p.role });

export async function registerParty(
  deps: OperatorDeps,
  input: { party: PartyRole; name: string; platformId?: string; versions?: readonly OcpiVersion[] },
): Promise<{ platformId: string; initialToken: string }> {
  const party = normaliseParty(input.party);
  if (!input.name.trim()) throw new OperatorInputError('name must not be empty');
  const initialToken = generateCredentialsToken();
  const { platformId } = await deps.store.registerParty({
    party,
    name: input.name.trim(),
    ...(input.platformId ? { platformId: input.platformId } : {}),
    ...(input.versions ? { versions: input.versions } : {}),
    initialTokenHash: hashCredentialsToken(initialToken),
    outbox: (id) => [
      registryEvent(deps, registryEventTypes.partyRegistered, roleKey(party), { ...partyJson(party), name: input.name.trim(), platform_id: id, ...(input.versions ? { versions: input.versions } : {}) }),
    ],
  });
  return { platformId, initialToken };
}

export async function reissueInitialToken(deps: OperatorDeps, party: PartyRole): Promise<{ platformId: string; initialToken: string }> {
  const p = normaliseParty(party);
  const listing = await deps.store.findParty(p);
  if (!listing) throw new OperatorInputError(`no such party ${roleKey(p)}`);
  if (listing.registered) throw new OperatorInputError(`${roleKey(p)} has credentials registered; the partner rotates them with PUT credentials`);
  const initialToken = generateCredentialsToken();
  await deps.store.reissueInitialToken(listing.platformId, hashCredentialsToken(initialToken), [
    registryEvent(deps, registryEventTypes.partyRegistered, roleKey(p), { ...partyJson(p), platform_id: listing.platformId, reissued_initial_token: true }),
  ]);
  return { platformId: listing.platformId, initialToken };
}

/** Receiver modules whose URL an operator may set (interface document, Receiver endpoints). */
export const RECEIVER_MODULES = ['sessions', 'cdrs', 'tokens', 'commands', 'chargingprofiles', 'hubclientinfo'] as const;

export async function overrideEndpoint(
  deps: OperatorDeps,
  input: { party: PartyRole; module: string; url: string | undefined },
): Promise<void> {
  const party = normaliseParty(input.party);
  if (!(RECEIVER_MODULES as readonly string[]).includes(input.module)) {
    throw new OperatorInputError(`module must be one of ${RECEIVER_MODULES.join(', ')}`);
  }
  if (input.url !== undefined) {
    let u: URL;
    try {
      u = new URL(input.url);
    } catch {
      throw new OperatorInputError(`not a URL: ${input.url}`);
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new OperatorInputError('receiver URL must be http(s)');
  }
  if (!(await deps.store.findParty(party))) throw new OperatorInputError(`no such party ${roleKey(party)}`);
  await deps.store.overrideEndpoint(party, input.module, input.url, [
    registryEvent(deps, registryEventTypes.endpointOverridden, roleKey(party), { ...partyJson(party), module: input.module, url: input.url ?? null }),
  ]);
}

export async function setRoutingRule(deps: OperatorDeps, input: { emsp: PartyRef; cpo: PartyRef; enabled: boolean }): Promise<void> {
  const emsp = normaliseParty(input.emsp);
  const cpo = normaliseParty(input.cpo);
  if (!(await deps.store.findParty({ ...emsp, role: 'EMSP' }))) throw new OperatorInputError(`no such eMSP ${partyKey(emsp)}`);
  if (!(await deps.store.findParty({ ...cpo, role: 'CPO' }))) throw new OperatorInputError(`no such CPO ${partyKey(cpo)}`);
  const key = `${partyKey(emsp)}->${partyKey(cpo)}`;
  await deps.store.setRoutingRule(emsp, cpo, input.enabled, [
    registryEvent(deps, registryEventTypes.routingRuleChanged, key, {
      emsp: { country_code: emsp.countryCode, party_id: emsp.partyId },
      cpo: { country_code: cpo.countryCode, party_id: cpo.partyId },
      enabled: input.enabled,
    }),
  ]);
}

export async function setSuspended(deps: OperatorDeps, input: { party: PartyRole; suspended: boolean }): Promise<void> {
  const party = normaliseParty(input.party);
  if (!(await deps.store.findParty(party))) throw new OperatorInputError(`no such party ${roleKey(party)}`);
  await deps.store.setSuspended(party, input.suspended, [
    registryEvent(
      deps,
      input.suspended ? registryEventTypes.partySuspended : registryEventTypes.partyReinstated,
      roleKey(party),
      partyJson(party),
    ),
  ]);
}
