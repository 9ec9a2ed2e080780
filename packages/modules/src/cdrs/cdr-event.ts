import { cdrEventTypes, eventIdFor, newEvent, topics, type HubEvent } from '@hub/events';
import { partyKey } from '@hub/ocpi';
import type { ObjectPath } from '@hub/core';
import { objectKey, pathSubject } from '../object-events.ts';

/**
 * The event of an accepted CDR, whoever appends it (the ingress when the CPO posts it, the prober when
 * that append never completed). Its ce_id is derived from the CDR's owner, id and content, so every
 * append of one CDR is one event to a consumer that dedupes on ce_id (README, The CDR topic).
 */
export function cdrPostedEvent(
  path: ObjectPath,
  cdr: Record<string, unknown>,
  contentHash: string,
  context: { source: string; correlationId?: string; requestId?: string },
): HubEvent {
  const token = (cdr['cdr_token'] ?? {}) as Record<string, unknown>;
  const from = partyKey(path);
  return newEvent({
    id: eventIdFor(`cdr:${from}/${path.id}:${contentHash}`),
    type: cdrEventTypes.cdrPosted,
    source: context.source,
    subject: pathSubject(path),
    key: objectKey(path),
    data: cdr,
    ...(context.correlationId ? { correlationId: context.correlationId } : {}),
    ...(context.requestId ? { requestId: context.requestId } : {}),
    from,
    // The eMSP the CDR is for (mod_cdrs.asciidoc, CdrToken: country_code and party_id of the eMSP).
    to: partyKey({ countryCode: text(token['country_code']), partyId: text(token['party_id']) }),
  });
}

const cdrTopic = topics.cdrs;

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** What appendCdrEventsOnce needs of the event log port (@hub/event-log's EventLog). */
export interface CdrEventLog {
  append(topic: string, events: readonly HubEvent[]): Promise<void>;
  findEvents(topic: string, wanted: ReadonlyArray<{ key: string; id: string; since: Date }>): Promise<Set<string>>;
}

/**
 * Appends CDR events whose earlier append did not complete (it failed or timed out, so it may have
 * landed) unless the topic holds them already: each is looked for in its key's partition from the time
 * the CDR was received. The caller must hold the CDR's append (CdrReceipts.claimCdrAppend), so no
 * earlier append of it can still land (docs/decisions/0003-each-cdr-once.md). Returns the events
 * appended and the ones found.
 */
export async function appendCdrEventsOnce(
  log: CdrEventLog,
  cdrs: ReadonlyArray<{ event: HubEvent; receivedAt: Date }>,
): Promise<{ appended: HubEvent[]; present: HubEvent[] }> {
  const found = await log.findEvents(cdrTopic, cdrs.map((c) => ({ key: c.event.key, id: c.event.id, since: c.receivedAt })));
  const present = cdrs.filter((c) => found.has(c.event.id)).map((c) => c.event);
  const appended = cdrs.filter((c) => !found.has(c.event.id)).map((c) => c.event);
  if (appended.length > 0) await log.append(cdrTopic, appended);
  return { appended, present };
}

/**
 * Why a settle window may be too short for the cluster (docs/decisions/0003-each-cdr-once.md, The
 * settle window): a CDR's append that timed out can still become visible until its partition's
 * in-sync replicas caught up or the leader dropped the lost follower from them, which Kafka does up
 * to 1.5 x replica.lag.time.max.ms after the follower stopped (the ISR check runs every half lag).
 * A re-append searched before then may miss it, and the CDR is twice in ocpi.cdrs.v1. Undefined when
 * the window covers it or the broker setting is not disclosed.
 */
export function shortCdrSettleWindow(settleSeconds: number, appendTimeoutMs: number, replicaLagTimeMaxMs: number | undefined): string | undefined {
  if (replicaLagTimeMaxMs === undefined || !Number.isFinite(replicaLagTimeMaxMs)) return undefined;
  const neededMs = appendTimeoutMs + 1.5 * replicaLagTimeMaxMs;
  if (settleSeconds * 1000 > neededMs) return undefined;
  return `CDR_RELAY_AFTER_SECONDS=${settleSeconds} is not longer than APPEND_TIMEOUT_MS (${appendTimeoutMs} ms) + 1.5 x the brokers' replica.lag.time.max.ms (${replicaLagTimeMaxMs} ms) = ${Math.ceil(neededMs / 1000)} s: after a broker loss a CDR may reach ocpi.cdrs.v1 twice; set it above ${Math.ceil(neededMs / 1000)}`;
}

/** Reads the brokers' replica.lag.time.max.ms and reports a settle window too short for it (best effort, at start). */
export async function checkCdrSettleWindow(
  log: { brokerSetting(name: string): Promise<string | undefined> },
  settleSeconds: number,
  appendTimeoutMs: number,
  warn: (message: string) => void,
): Promise<void> {
  const lag = await log.brokerSetting('replica.lag.time.max.ms').catch(() => undefined);
  const advice = shortCdrSettleWindow(settleSeconds, appendTimeoutMs, lag === undefined ? undefined : Number(lag));
  if (advice) warn(advice);
}
