import { ListOffsetTimestamps, type Consumer, type GroupAssignment } from '@platformatic/kafka';
import type { RecordBatch, SubscribeOptions } from '@hub/core';
import type { LogSink } from './kafka-config.ts';
import { fetchPositions, type FetchedPartition, type FetchLimitsMs } from './platformatic-fetch.ts';

// The consuming half of the @platformatic/kafka subscription (platformatic-subscription.ts): the
// group membership (JoinGroup, SyncGroup, heartbeats, rejoining after a rebalance) is the client's,
// the fetching is this loop's (platformatic-fetch.ts), because the client's MessagesStream has one pause
// for the whole stream and no seek per partition. Each assigned partition starts where the caller's store
// says it stands, else at the group's committed offset, else at its beginning; a batch's position
// moves only once its handler is done; a handler that asks for a backoff pauses its partition alone
// and the same records are fetched again after it; the resolved offsets are committed every
// OFFSET_COMMIT_INTERVAL_MS and at stop; a consumer that caught up lingers FETCH_LINGER_MS between fetches.

export interface ConsumeLoopSettings {
  readonly lingerMs: number;
  readonly commitIntervalMs: number;
  readonly limits: FetchLimitsMs;
  readonly logger: LogSink;
}

const key = (topic: string, partition: number) => `${topic}:${partition}`;

/** The partitions of an assignment, by topic (what onAssigned reports). */
function byTopic(assignments: readonly GroupAssignment[]): Record<string, number[]> {
  return Object.fromEntries(assignments.map((a) => [a.topic, [...a.partitions]]));
}

// Long because: one loop over state its assignment handler, fetches, batches and stop all share (the
// assignment's epoch, the next offset and pause of each partition, what was handled since the last commit).
export function consumeLoop(consumer: Consumer, options: SubscribeOptions, owned: ReadonlySet<string>, settings: ConsumeLoopSettings) {
  let epoch = 0;
  let assigned: Array<{ topic: string; partition: number }> = [];
  const next = new Map<string, bigint>();
  const pausedUntil = new Map<string, number>();
  let resolved = new Map<string, { topic: string; partition: number; offset: bigint }>();
  let positionsLoaded: Promise<void> = Promise.resolve();
  let stopped = false;
  let lastCommit = Date.now();
  let wake: (() => void) | undefined;

  /** Where each newly assigned partition starts: the stored position, the committed offset, the beginning. */
  const loadPositions = async (at: number, partitions: ReadonlyArray<{ topic: string; partition: number }>): Promise<void> => {
    const topics = [...new Set(partitions.map((p) => p.topic))];
    const request = topics.map((topic) => ({ topic, partitions: partitions.filter((p) => p.topic === topic).map((p) => p.partition) }));
    const [committed, earliest] = await Promise.all([
      consumer.listCommittedOffsets({ topics: request }),
      consumer.listOffsets({ topics, partitions: Object.fromEntries(request.map((r) => [r.topic, r.partitions])), timestamp: ListOffsetTimestamps.EARLIEST }),
    ]);
    for (const topic of topics) {
      const stored = options.positions ? await options.positions.load(topic) : new Map<number, bigint>();
      if (at !== epoch) return;
      for (const p of partitions.filter((q) => q.topic === topic)) {
        const kafkaCommitted = committed.get(topic)?.[p.partition] ?? -1n;
        // A partition kept through a rebalance goes on from what this member handled, not from the
        // last interval's commit (which would deliver that interval's records again).
        const handled = resolved.get(key(topic, p.partition))?.offset;
        next.set(key(topic, p.partition), stored.get(p.partition) ?? handled ?? (kafkaCommitted >= 0n ? kafkaCommitted : (earliest.get(topic)?.[p.partition] ?? 0n)));
      }
    }
  };
  const assign = (assignments: readonly GroupAssignment[]): void => {
    const at = ++epoch;
    const mine = assignments.filter((a) => owned.has(a.topic));
    assigned = mine.flatMap((a) => a.partitions.map((partition) => ({ topic: a.topic, partition })));
    const keys = new Set(assigned.map((p) => key(p.topic, p.partition)));
    // Partitions given away are another member's to commit now; each partition kept starts again from
    // the store (Postgres holds the truth; another member may have moved it meanwhile).
    resolved = new Map([...resolved].filter(([k]) => keys.has(k)));
    next.clear();
    // A partition kept waits out its backoff; one given away is another member's now.
    for (const k of [...pausedUntil.keys()]) if (!keys.has(k)) pausedUntil.delete(k);
    options.onAssigned?.(byTopic(assignments));
    const load = (): Promise<void> =>
      loadPositions(at, assigned).catch(async (err: unknown) => {
        if (at !== epoch || stopped) return;
        settings.logger.warn('could not load the positions of the assigned partitions; retried', { group: options.group, err: (err as Error).message });
        await new Promise((r) => setTimeout(r, 1_000));
        return load();
      });
    positionsLoaded = load();
    wake?.();
  };

  const handle = async (at: number, fetched: FetchedPartition): Promise<void> => {
    const k = key(fetched.topic, fetched.partition);
    if (at !== epoch || stopped) return;
    if (fetched.records.length === 0) {
      if (fetched.next > fetched.offset) next.set(k, fetched.next);
      return;
    }
    const first = fetched.records[0];
    const last = fetched.records[fetched.records.length - 1];
    const batch: RecordBatch = { topic: fetched.topic, partition: fetched.partition, firstOffset: first?.offset ?? '0', lastOffset: last?.offset ?? '0', records: fetched.records };
    let outcome: Awaited<ReturnType<SubscribeOptions['onBatch']>>;
    try {
      outcome = await options.onBatch(batch);
    } catch (err) {
      // A handler that threw (a dependency down, a bug): the partition waits and the batch comes again.
      settings.logger.error('the batch handler failed; the partition is fetched again', { group: options.group, topic: fetched.topic, partition: fetched.partition, err });
      outcome = { retryAfterMs: 1_000 };
    }
    if (at !== epoch) return;
    if (outcome) {
      // Not done: the partition waits where it is and is fetched again after the backoff.
      pausedUntil.set(k, Date.now() + outcome.retryAfterMs);
      return;
    }
    next.set(k, fetched.next);
    resolved.set(k, { topic: fetched.topic, partition: fetched.partition, offset: fetched.next });
    const lag = fetched.highWatermark - fetched.next;
    options.onLag?.(fetched.topic, fetched.partition, Number(lag > 0n ? lag : 0n));
  };

  const commit = async (): Promise<void> => {
    if (resolved.size === 0) return;
    const offsets = [...resolved.values()].map((r) => ({ ...r, leaderEpoch: -1 }));
    lastCommit = Date.now();
    await consumer.commit({ offsets });
  };

  /** The batches of one fetch, `concurrency` partitions side by side, each in its order. */
  const handleAll = async (at: number, fetched: readonly FetchedPartition[]): Promise<void> => {
    const queue = [...fetched];
    const worker = async (): Promise<void> => {
      for (let f = queue.shift(); f; f = queue.shift()) await handle(at, f);
    };
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 1) }, worker));
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => ((wake = undefined), resolve()), ms);
      wake = () => (clearTimeout(timer), (wake = undefined), resolve());
    });

  const iteration = async (): Promise<void> => {
    await positionsLoaded;
    const at = epoch;
    const now = Date.now();
    const wanted = assigned.flatMap((p) => {
      const offset = next.get(key(p.topic, p.partition));
      return offset !== undefined && (pausedUntil.get(key(p.topic, p.partition)) ?? 0) <= now ? [{ ...p, offset }] : [];
    });
    if (wanted.length === 0) return sleep(Math.min(100, ...[...pausedUntil.values()].map((t) => Math.max(1, t - now))));
    const fetched = await fetchPositions(consumer, wanted, settings.limits);
    const fetchedAt = Date.now();
    await handleAll(at, fetched);
    if (Date.now() - lastCommit >= settings.commitIntervalMs) await commit().catch((err: unknown) => settings.logger.warn('could not commit the consumed offsets', { group: options.group, err: (err as Error).message }));
    const caughtUp = fetched.every((f) => f.highWatermark <= (next.get(key(f.topic, f.partition)) ?? 0n));
    const linger = fetchedAt + settings.lingerMs - Date.now();
    if (caughtUp && linger > 0) await sleep(linger);
  };

  const running = (async () => {
    while (!stopped) {
      try {
        await iteration();
      } catch (err) {
        if (stopped) break;
        settings.logger.warn('Kafka fetch failed; fetched again', { group: options.group, err: (err as Error).message });
        consumer.clearMetadata();
        await sleep(1_000);
      }
    }
  })();
  const ended = running.catch(() => undefined);

  return {
    assign,
    commit,
    /**
     * Stops after the iteration in flight; settles once the loop has ended (never rejects: an
     * iteration's failure is logged and retried). A fetch in flight ends with its long poll, but with
     * the brokers gone the client retries it for minutes (each attempt retrying its metadata request
     * too): the caller bounds the wait and then closes the consumer, which ends those retries.
     */
    stop(): Promise<void> {
      stopped = true;
      wake?.();
      return ended;
    },
  };
}
