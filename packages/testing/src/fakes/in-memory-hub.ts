import { generateCredentialsToken, hashCredentialsToken, type PartyRole } from '@hub/ocpi';
import { projectedModules, topicOf } from '@hub/modules';
import { aesGcmTokenCipher } from '@hub/registry';
import { projectedRecord, type PartnerEndpoint, type RegistryStore } from '@hub/core';
import { inMemoryCallerLookup } from './in-memory-caller-lookup.ts';
import { inMemoryChargingProfileStore } from './in-memory-charging-profile-store.ts';
import { inMemoryCommandStore } from './in-memory-command-store.ts';
import { inMemoryDeliveryStore } from './in-memory-delivery-store.ts';
import { inMemoryEventLog } from './in-memory-event-log.ts';
import { inMemoryRateLimiter } from './in-memory-rate-limiter.ts';
import { inMemoryReadModelStore } from './in-memory-read-model-store.ts';
import { inMemoryRegistryStore } from './in-memory-registry-store.ts';
import { inMemoryRoutingDirectory } from './in-memory-routing-directory.ts';
import { scriptedPartnerClient } from './scripted-partner-client.ts';

// Every port the ingress needs, in memory and wired together as the real hub wires them: what is
// appended to a projected module's topic is projected into its read model at once (the module
// table's projection rules, as the projector applies them), so a push is visible to the next request.

export type InMemoryHub = ReturnType<typeof inMemoryHub>;

export function inMemoryHub(options: { now?: () => number } = {}) {
  const now = options.now ?? Date.now;
  const registry = inMemoryRegistryStore({ now: () => new Date(now()) });
  const readModels = inMemoryReadModelStore(registry.view);
  const events = inMemoryEventLog();
  const deliveries = inMemoryDeliveryStore();
  const projected = new Map<string, number>();
  const append = events.append.bind(events);
  events.append = async (topic, appended) => {
    await append(topic, appended);
    const model = projectedModules.find((m) => topicOf(m) === topic);
    if (!model) return;
    const from = projected.get(topic) ?? 0;
    const records = events.appended(topic).slice(from).map((e, i) => projectedRecord(String(from + i), e));
    projected.set(topic, from + records.length);
    await readModels.applyBatch(model, 0, records);
  };
  return {
    registry,
    callers: inMemoryCallerLookup(registry),
    routing: inMemoryRoutingDirectory(registry.view),
    readModels,
    events,
    deliveries,
    commands: inMemoryCommandStore(registry.view, deliveries, { now }),
    chargingProfiles: inMemoryChargingProfileStore(deliveries, { now }),
    rateLimiter: inMemoryRateLimiter({ now }),
    /** Real-time forwards (token authorization, commands); answer with `realtime.answerWith`. */
    realtime: scriptedPartnerClient(),
    /** The credentials module's calls to a partner's versions (unreachable unless scripted). */
    partners: scriptedPartnerClient(),
    cipher: aesGcmTokenCipher(Buffer.alloc(32, 7)),
  };
}

/** A platform as the credentials exchange leaves it: registered parties, a hub token and endpoints. */
export interface PlatformGiven {
  readonly name?: string;
  readonly parties: readonly PartyRole[];
  /** The hub token the platform calls with (plain); its initial token when `registered` is false. */
  readonly token?: string;
  readonly registered?: boolean;
  readonly versionsUrl?: string;
  readonly endpoints?: readonly PartnerEndpoint[];
  /** The partner's own token, sealed with `seal` (what the hub calls the partner with). */
  readonly partnerToken?: string;
  /** The OCPI version its credentials were exchanged in (2.2.1 unless given). */
  readonly version?: '2.1.1' | '2.2.1' | '2.3.0';
}

/**
 * Registers a platform through the RegistryStore port only (registerParty, then saveCredentials), so
 * the same arrangement holds for the in-memory and the Postgres adapter.
 */
export async function registerPlatform(store: RegistryStore, given: PlatformGiven, seal: (plain: string) => Buffer = (p) => Buffer.from(p)): Promise<{ platformId: string; token: string }> {
  const [first, ...more] = given.parties;
  if (!first) throw new Error('a platform has at least one party');
  const token = given.token ?? generateCredentialsToken();
  const initial = given.registered === false ? token : generateCredentialsToken();
  const name = given.name ?? `${first.countryCode}/${first.partyId}`;
  const { platformId } = await store.registerParty({ party: first, name, initialTokenHash: hashCredentialsToken(initial), outbox: () => [] });
  for (const party of more) await store.registerParty({ party, name, platformId, initialTokenHash: hashCredentialsToken(initial), outbox: () => [] });
  if (given.registered === false) return { platformId, token };
  const saved = await store.saveCredentials(
    {
      platformId,
      presentedTokenHash: hashCredentialsToken(initial),
      newHubTokenHash: hashCredentialsToken(token),
      partnerTokenSealed: seal(given.partnerToken ?? `partner-token-of-${platformId}`),
      versionsUrl: given.versionsUrl ?? `https://${first.partyId.toLowerCase()}.example/ocpi/versions`,
      version: given.version ?? '2.2.1',
      endpoints: given.endpoints ?? [],
      businessDetails: { name },
      outbox: [],
    },
    'register',
  );
  if (!saved) throw new Error(`credentials of ${name} not saved`);
  return { platformId, token };
}
