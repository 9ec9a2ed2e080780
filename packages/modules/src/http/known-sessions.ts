import { topics } from '@hub/events';
import type { DeliveryStore, EventLog, ObjectPath } from '@hub/core';
import { HubError } from '@hub/ocpi';
import { pathSubject } from '../index.ts';

// Whether the hub holds a session, before a PATCH of it is accepted (mod_sessions.asciidoc, PATCH
// Method: it updates "the Session object with Session.id equal to {session_id}"). The hub holds a
// session once the dispatcher has made its delivery row from the PUT. A PUT the ingress accepted a
// moment ago may not have reached the dispatcher yet: on a miss the ingress waits (bounded) until the
// dispatcher's stored positions reach the sessions topic's end, as the location routes wait for the
// projection (ocpi-objects.ts, projectionWait), and refuses only then. Behind beyond the bound: 503,
// never a wrong refusal.

export interface DispatcherWait {
  /** Resolves true once the dispatcher has made rows from everything appended to the sessions topic so far. */
  caughtUp(): Promise<boolean>;
}

export function dispatcherWait(eventLog: Pick<EventLog, 'latestOffsets' | 'physical'>, deliveries: Pick<DeliveryStore, 'deliveryPositions'>, dispatcherGroupId: string, timeoutMs: number): DispatcherWait {
  // The dispatcher stores its positions under the physical topic name (the one its batches carry).
  const physical = eventLog.physical(topics.sessions);
  return {
    async caughtUp() {
      const heads = await eventLog.latestOffsets(topics.sessions);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const positions = await deliveries.deliveryPositions(dispatcherGroupId, physical);
        if ([...heads].every(([partition, head]) => head === 0n || (positions.get(partition) ?? 0n) >= head)) return true;
        if (Date.now() >= deadline) return false;
        await new Promise((r) => setTimeout(r, 5));
      }
    },
  };
}

/**
 * Sessions known to exist, so a PATCH of an active session (sent every few minutes while it charges)
 * needs no query. Delivery rows of sessions are never deleted, so an entry stays true. Bounded; when
 * full it starts over. Ids are CiStrings (types.asciidoc).
 */
export class KnownSessions {
  private readonly known = new Set<string>();
  private readonly max: number;
  constructor(max = 200_000) {
    this.max = max;
  }
  has(path: ObjectPath): boolean {
    return this.known.has(pathSubject(path).toUpperCase());
  }
  add(path: ObjectPath): void {
    if (this.known.size >= this.max) this.known.clear();
    this.known.add(pathSubject(path).toUpperCase());
  }
}

/** The session must exist for a PATCH: UNKNOWN_SESSION otherwise, and nothing is appended. */
export async function requireKnownSession(deliveries: Pick<DeliveryStore, 'sessionExists'>, wait: DispatcherWait, known: KnownSessions, path: ObjectPath): Promise<void> {
  if (known.has(path)) return;
  const cpo = { countryCode: path.countryCode, partyId: path.partyId };
  if (await deliveries.sessionExists(cpo, path.id)) return known.add(path);
  const caughtUp = await wait.caughtUp();
  if (await deliveries.sessionExists(cpo, path.id)) return known.add(path);
  if (!caughtUp) throw new HubError('UNAVAILABLE', { detail: 'the hub has not finished storing recent session pushes; retry shortly' });
  throw new HubError('UNKNOWN_SESSION', { detail: `no session ${pathSubject(path)}: PUT the full session first` });
}
