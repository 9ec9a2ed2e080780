import type { HubEvent } from '@hub/events';
import { DependencyUnavailable, type EventLog } from '@hub/core';

// What the ingress needs of the EventLog port (@hub/event-log): appending and the topics' heads. One
// partition per topic; `unavailable()` makes appends fail as a Kafka outage does (DependencyUnavailable,
// which the ingress answers with 503). event-log-contract.ts runs the same rules on Kafka.

export type EventAppendLog = Pick<EventLog, 'append' | 'latestOffsets' | 'physical' | 'findEvents'>;

export interface InMemoryEventLog extends EventAppendLog {
  /** The events appended to a logical topic, in order. */
  appended(topic: string): readonly HubEvent[];
  /** Appends fail with DependencyUnavailable until `available()`. */
  unavailable(): void;
  available(): void;
}

export function inMemoryEventLog(): InMemoryEventLog {
  const topics = new Map<string, HubEvent[]>();
  let down = false;
  return {
    async append(topic, events) {
      if (down) throw new DependencyUnavailable('kafka', `append to ${topic}: the in-memory event log is unavailable`);
      const log = topics.get(topic) ?? [];
      log.push(...events);
      topics.set(topic, log);
    },
    async latestOffsets(topic) {
      return new Map([[0, BigInt(topics.get(topic)?.length ?? 0)]]);
    },
    async findEvents(topic, wanted) {
      if (down) throw new DependencyUnavailable('kafka', `search of ${topic}: the in-memory event log is unavailable`);
      const held = new Set((topics.get(topic) ?? []).map((e) => e.id));
      return new Set(wanted.filter((w) => held.has(w.id)).map((w) => w.id));
    },
    physical: (topic) => topic,
    appended: (topic) => [...(topics.get(topic) ?? [])],
    unavailable() {
      down = true;
    },
    available() {
      down = false;
    },
  };
}
