import type { Admin, Consumer } from 'kafkajs';
import type { ObservedTopic } from './position-check.ts';
import { retrying, startWhenPositionsMatch, verifyTopicPositions, type TopicIds } from './position-verify.ts';
import type { PositionsMismatch, StoredPositions, SubscribeOptions, Subscription } from '@hub/core';
import type { LogSink } from './kafka-config.ts';
import { handleBatch, storedPositionFloors, type BatchLoop } from './kafka-batch.ts';
import { PROGRESS_CHECK_MS, progressWatch, startProgressChecks, type StalledPartition } from './progress-watch.ts';

// The Kafka adapter of EventLog.subscribe (subscription.ts): the only code that drives a kafkajs
// consumer. It starts each partition where the caller's store says it stands (Postgres is the truth,
// Kafka's committed offset only a hint), resolves and commits an offset only after the handler is
// done with its batch, heartbeats between batches, and pauses a partition for the backoff the
// handler asks for (kafkajs then fetches again from the last resolved offset: nothing is skipped).
// The committed offset, being a hint, is committed every OFFSET_COMMIT_INTERVAL_MS and when the
// consumer stops, as Kafka's own consumers do (auto.commit.interval.ms, 5 s), not after every
// batch as kafkajs's autoCommit does: at moderate rates a batch holds a few records, and an
// OffsetCommit (a replicated write to __consumer_offsets) per batch and partition was as many
// requests as the producers sent (335 a second at 1,000 PATCH/s; the broker's CPU fell by
// about a fifth without them). A replica that dies re-reads at most that interval's records when its
// store has no positions.

/** How often a consumer commits its resolved offsets to Kafka (Kafka's auto.commit.interval.ms default). */
export const OFFSET_COMMIT_INTERVAL_MS = 5_000;

// A fetch answers as soon as one record is there (minBytes 1, so an idle consumer long-polls at no
// cost and the first record after a pause is handled at once). At moderate rates that made every
// fetch bring a few records, and every batch cost a transaction, an OffsetCommit and a fetch: at
// 1,000 PATCH/s the projector and its Postgres spent about as much CPU as the ingress. So a consumer
// that has caught up lingers: after a batch that reached the head of its partition it fetches again
// only FETCH_LINGER_MS after the previous fetch came back (the consumer-side twin of a producer's
// linger.ms), and the next fetch brings what arrived meanwhile in one batch. A consumer behind (a
// backlog, a rebuild, a replay) fetches again at once. Figures: README, Benchmarks, "What stalled the
// paced PATCHes".
/** Wait at most this long after a fetch before the next one, once caught up. */
export const FETCH_LINGER_MS = 20;

/** How long a consumer that could not be started again waits before the next try. */
export const RESTART_RETRY_MS = 5_000;

/** How long a stop or a restart waits for the old consumer's commit and disconnect before going on. */
export const RETIRE_WAIT_MS = 2_000;

/** Waits for `work` at most `ms`; a failure is reported, never thrown (the caller goes on either way). */
export async function atMost(ms: number, work: Promise<unknown>, onFailure: (err: Error) => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const settled = work.then(
    () => undefined,
    (err: unknown) => onFailure(err instanceof Error ? err : new Error(String(err))),
  );
  await Promise.race([settled, new Promise<void>((r) => (timer = setTimeout(r, ms).unref()))]);
  clearTimeout(timer);
}

/** How long an empty fetch of a one-off group waits at the broker (SubscribeOptions.ephemeral). */
export const EPHEMERAL_FETCH_WAIT_MS = 200;

export interface KafkaSubscriptionContext {
  readonly consumer: (group: string, options: { maxBytes?: number; maxBytesPerPartition?: number; maxWaitMs?: number }) => Consumer;
  readonly admin: () => Promise<Admin>;
  readonly physical: (topic: string) => string;
  readonly physicalGroup: (group: string) => string;
  readonly logger: LogSink;
  /** Kafka's topic ids of physical topics; an empty map when they cannot be read. */
  readonly topicIds: TopicIds;
  /** How often a subscription with stored positions checks that its partitions move (PROGRESS_CHECK_MS). */
  readonly progressCheckMs?: number | undefined;
}

export type { TopicIds } from './position-verify.ts';

/**
 * Cluster id and the offset range of every partition of a (physical) topic. A leader that just moved
 * (a broker restarting, a topic just created) answers NOT_LEADER and the like, retriable: asked again
 * for up to `retryForMs`, as kafkajs's consumer would while joining its group.
 */
export async function observeTopic(admin: Admin, physicalTopic: string, retryForMs = 30_000): Promise<ObservedTopic> {
  return retrying(async () => {
    const [cluster, offsets] = await Promise.all([admin.describeCluster(), admin.fetchTopicOffsets(physicalTopic)]);
    return { clusterId: cluster.clusterId, ranges: new Map(offsets.map((o) => [o.partition, { low: BigInt(o.low), high: BigInt(o.high) }])) };
  }, (e) => (e as { retriable?: unknown }).retriable === true, retryForMs);
}

/** Checks stored positions against the topics as they are; saves the binding of those that match. */
export async function verifyPositions(admin: Admin, physicalTopics: readonly string[], positions: StoredPositions, options: { rebind?: boolean; topicIds?: TopicIds } = {}): Promise<PositionsMismatch[]> {
  return verifyTopicPositions((topic) => observeTopic(admin, topic), physicalTopics, positions, options);
}

// Long because: one consumer's lifecycle over state its start, run, restart and stop all change (the
// consumer, its handled offsets, stopped; the position gate is position-verify.ts, the progress
// checks progress-watch.ts); a batch's handling is in kafka-batch.ts.
export async function kafkaSubscribe(ctx: KafkaSubscriptionContext, options: SubscribeOptions): Promise<Subscription> {
  const physicalTopics = options.topics.map(ctx.physical);
  const owned = new Set(physicalTopics);
  const timers = new Set<NodeJS.Timeout>();
  let consumer: Consumer | undefined;
  /** The next offset to read of each partition this member owns and has handled records of, for the commit at stop. */
  let resolved = new Map<string, { topic: string; partition: number; offset: string }>();
  let stopped = false;

  const floors = storedPositionFloors(ctx.logger, options, owned);
  const progress = progressWatch(owned);

  const run = async (): Promise<void> => {
    const c = ctx.consumer(options.group, {
      ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}),
      ...(options.maxBytesPerPartition ? { maxBytesPerPartition: options.maxBytesPerPartition } : {}),
      // A one-off reader (a rebuild, a snapshot load) stops as soon as it reached its target; its stop
      // waits for the fetch in flight, which at the end of a topic is an empty long poll.
      ...(options.ephemeral ? { maxWaitMs: EPHEMERAL_FETCH_WAIT_MS } : {}),
    });
    consumer = c;
    await c.connect();
    // Stopped while connecting (a recheck that found the positions fixed as the service stopped).
    if (stopped) return void (await c.disconnect());
    for (const topic of physicalTopics) await c.subscribe({ topic, fromBeginning: true });
    // When the last fetch came back (kafkajs emits FETCH before it hands out the fetch's batches).
    let fetchedAt = 0;
    c.on(c.events.FETCH, () => {
      fetchedAt = Date.now();
    });
    c.on(c.events.GROUP_JOIN, (e) => {
      // Partitions given away are another member's to commit now.
      const owned = e.payload.memberAssignment;
      resolved = new Map([...resolved].filter(([, r]) => owned[r.topic]?.includes(r.partition)));
      options.onAssigned?.(e.payload.memberAssignment);
      progress.assigned(e.payload.memberAssignment);
      floors.seekToStoredPositions(c, e.payload.memberAssignment);
    });
    const loop: BatchLoop = {
      options,
      owned,
      timers,
      floors,
      lingerMs: FETCH_LINGER_MS,
      fetchedAt: () => fetchedAt,
      handled: (topic, partition, offset) => {
        resolved.set(`${topic}:${partition}`, { topic, partition, offset });
      },
      progress,
    };
    await c.run({
      autoCommit: false,
      autoCommitInterval: OFFSET_COMMIT_INTERVAL_MS,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: options.concurrency ?? 1,
      eachBatch: (payload) => handleBatch(loop, payload),
    });
    options.onStarted?.();
  };

  // What was handled since the last interval's commit; bounded: a lost broker must not hold up a stop
  // or a restart (the positions in the store, where there are any, are the truth anyway).
  const commitHandled = async (c: Consumer): Promise<void> => {
    if (resolved.size === 0 || options.ephemeral) return;
    await atMost(RETIRE_WAIT_MS, c.commitOffsets([...resolved.values()]), (err) => ctx.logger.warn('could not commit the consumed offsets', { group: options.group, err: err.message }));
  };
  const restart = async (stalled: readonly StalledPartition[]): Promise<void> => {
    const old = consumer;
    if (!old || stopped) return;
    ctx.logger.warn('partitions assigned to this consumer are behind and were not fetched for two checks; the consumer is started again', {
      group: options.group,
      partitions: stalled.map((p) => ({ topic: p.topic, partition: p.partition, position: p.position?.toString() ?? null, end: p.end.toString(), stalledForMs: Date.now() - p.since })),
    });
    consumer = undefined;
    await commitHandled(old);
    // Bounded like the commit: while a lost broker holds the old consumer's disconnect, no new consumer
    // would start and no further check would run. A late disconnect only closes sockets.
    await atMost(RETIRE_WAIT_MS, old.disconnect(), (err) => ctx.logger.warn('could not disconnect the stalled consumer', { group: options.group, err: err.message }));
    resolved = new Map();
    await startAgain();
  };
  // A consumer that cannot be started again now (no broker answers) is tried again, never given up:
  // the checks do not restart a subscription without a consumer.
  const startAgain = async (): Promise<void> => {
    if (stopped) return;
    try {
      await run();
    } catch (err) {
      ctx.logger.warn('could not start the consumer again; retried', { group: options.group, err: (err as Error).message });
      if (consumer) await atMost(RETIRE_WAIT_MS, consumer.disconnect(), () => undefined);
      consumer = undefined;
      const retry = setTimeout(() => {
        timers.delete(retry);
        void startAgain();
      }, RESTART_RETRY_MS);
      timers.add(retry);
    }
  };
  const positions = options.positions;
  const checks =
    positions && !options.ephemeral
      ? startProgressChecks({
          everyMs: ctx.progressCheckMs ?? PROGRESS_CHECK_MS,
          watch: progress,
          ends: async (topic) => new Map((await (await ctx.admin()).fetchTopicOffsets(topic)).map((o) => [o.partition, BigInt(o.high)])),
          positions: (topic) => positions.load(topic),
          onStalled: restart,
          onCheckFailed: (err) => ctx.logger.warn('could not check that the partitions move; checked again later', { group: options.group, err: (err as Error).message }),
        })
      : undefined;

  const gate = await startWhenPositionsMatch({
    positions: options.positions,
    verify: async (positions) => verifyPositions(await ctx.admin(), physicalTopics, positions, { topicIds: ctx.topicIds }),
    run,
    stopped: () => stopped,
    onMismatch: options.onMismatch,
    recheckMs: options.recheckMs,
    warn: (err) => ctx.logger.warn('could not start the consumer; retried', { group: options.group, err: (err as Error).message }),
  });

  return {
    mismatches: () => gate.mismatches(),
    async stop() {
      stopped = true;
      gate.cancel();
      checks?.stop();
      for (const t of timers) clearTimeout(t);
      timers.clear();
      // A one-off group is deleted below: its offsets would serve nobody.
      if (consumer) await commitHandled(consumer);
      await consumer?.disconnect();
      if (options.ephemeral) {
        const admin = await ctx.admin().catch(() => undefined);
        // A one-off group served once; leave no stale group behind.
        await admin?.deleteGroups([ctx.physicalGroup(options.group)]).catch(() => undefined);
      }
    },
  };
}
