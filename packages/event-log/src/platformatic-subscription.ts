import type { Consumer } from '@platformatic/kafka';
import type { PositionsMismatch, SubscribeOptions, Subscription } from '@hub/core';
import type { LogSink } from './kafka-config.ts';
import { fetchLimits } from './fetch-limits.ts';
import { EPHEMERAL_FETCH_WAIT_MS, FETCH_LINGER_MS, OFFSET_COMMIT_INTERVAL_MS } from './consume-timing.ts';
import { consumeLoop } from './platformatic-consume-loop.ts';
import { platformaticRetriable } from './platformatic-failure.ts';
import { startWhenPositionsMatch } from './position-verify.ts';

// EventLog.subscribe over @platformatic/kafka (platformatic-event-log.ts): the positions check before
// the consumer joins its group and again every recheckMs while they mismatch (position-verify.ts); the
// consuming itself is platformatic-consume-loop.ts.

/**
 * How long a fetch that finds nothing waits at the broker: short, because this loop fetches every assigned partition in one request, so a partition whose backoff ended waits for the
 * long poll of the others, and a stop waits for it too.
 */
export const PLATFORMATIC_FETCH_WAIT_MS = 1_000;

/**
 * How long a stop waits for the fetch in flight: its long poll and the handling of what it brought
 * take well under this while a broker answers (the image tier's stops: projector about 1 s in all);
 * past it the consumer is closed (consumeLoop's stop).
 */
export const STOP_FETCH_WAIT_MS = 5_000;

export interface PlatformaticSubscriptionContext {
  /** A consumer of the (logical) group. */
  readonly consumer: (group: string) => Consumer;
  readonly physical: (topic: string) => string;
  readonly physicalGroup: (group: string) => string;
  readonly logger: LogSink;
  /** Stored positions against the physical topics (position-verify.ts). */
  readonly verify: (physicalTopics: readonly string[], positions: NonNullable<SubscribeOptions['positions']>) => Promise<PositionsMismatch[]>;
  readonly deleteGroup: (physicalGroup: string) => Promise<void>;
}

// Long because: one subscription's lifecycle over state its start, recheck and stop all change
// (the consumer, its loop, stopped; the position gate is position-verify.ts); the consuming is in platformatic-consume-loop.ts.
export async function platformaticSubscribe(ctx: PlatformaticSubscriptionContext, options: SubscribeOptions): Promise<Subscription> {
  const physicalTopics = options.topics.map(ctx.physical);
  const owned = new Set(physicalTopics);
  let consumer: Consumer | undefined;
  let loop: ReturnType<typeof consumeLoop> | undefined;
  let stopped = false;

  const run = async (): Promise<void> => {
    const c = ctx.consumer(options.group);
    consumer = c;
    const limits = fetchLimits(options);
    const l = consumeLoop(c, options, owned, {
      lingerMs: FETCH_LINGER_MS,
      commitIntervalMs: OFFSET_COMMIT_INTERVAL_MS,
      logger: ctx.logger,
      // A one-off reader (a rebuild, a snapshot load) stops as soon as it reached its target.
      limits: { ...limits, maxWaitMs: options.ephemeral ? EPHEMERAL_FETCH_WAIT_MS : PLATFORMATIC_FETCH_WAIT_MS },
    });
    loop = l;
    // Every (re)assignment, the first included: the client rejoins by itself after a rebalance.
    c.on('consumer:group:join', (payload) => l.assign(payload.assignments ?? []));
    c.topics.trackAll(...physicalTopics);
    await joinWhileRetriable(c, () => stopped, ctx.logger, options.group);
    options.onStarted?.();
  };

  const gate = await startWhenPositionsMatch({
    positions: options.positions,
    verify: (positions) => ctx.verify(physicalTopics, positions),
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
      const ended = loop?.stop() ?? Promise.resolve();
      const inTime = await endsWithin(ended, STOP_FETCH_WAIT_MS);
      if (!inTime) {
        // A fetch Kafka does not answer (the brokers are gone) or a batch still being handled: closing
        // the consumer ends the client's retries of the fetch, and a batch is let finish. The offsets
        // stay uncommitted: the positions are in the caller's store, Kafka's are a hint.
        ctx.logger.warn(`the consumer's fetch or batch in flight did not end within ${STOP_FETCH_WAIT_MS} ms of the stop; the consumer is closed without committing`, { group: options.group });
        await consumer?.close(true).catch(() => undefined);
        // Bounded too: a broker that hangs rather than dies keeps its connections open, and the
        // close's LeaveGroup waits for it (runService's stop deadline covers the rest).
        if (!(await endsWithin(ended, STOP_FETCH_WAIT_MS))) ctx.logger.warn(`the consumer's fetch in flight had not ended ${STOP_FETCH_WAIT_MS} ms after its close; stopped without it`, { group: options.group });
      }
      // What was handled since the last interval's commit; bounded: a lost broker must not hold up
      // the shutdown. A one-off group is deleted below: its offsets would serve nobody.
      if (loop && inTime && !options.ephemeral) {
        await endsWithin(
          loop.commit().catch((err: unknown) => ctx.logger.warn('could not commit the consumed offsets at stop', { group: options.group, err: (err as Error).message })),
          2_000,
        );
      }
      await consumer?.close(true).catch(() => undefined);
      if (options.ephemeral) await ctx.deleteGroup(ctx.physicalGroup(options.group)).catch(() => undefined);
    },
  };
}

/** Whether `work` settled within `ms` (it goes on either way; a stop only decides how long to wait for it). */
async function endsWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = work.then(
    () => true as const,
    () => true as const,
  );
  const inTime = await Promise.race([settled, late]);
  clearTimeout(timer);
  return inTime;
}

/** How long a consumer's first join goes on while the group coordinator answers retriably. */
export const JOIN_RETRY_MS = 60_000;

/**
 * Joins the group, again while the coordinator answers retriably (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS:
 * a fresh cluster loading __consumer_offsets, a coordinator failing over), for up to JOIN_RETRY_MS:
 * a service's start must not fail on what the cluster settles within seconds.
 */
async function joinWhileRetriable(c: Consumer, stopped: () => boolean, logger: LogSink, group: string): Promise<void> {
  const giveUpAt = Date.now() + JOIN_RETRY_MS;
  for (;;) {
    try {
      return void (await c.joinGroup({}));
    } catch (err) {
      if (stopped() || !platformaticRetriable(err) || Date.now() >= giveUpAt) throw err;
      logger.info('the consumer group could not be joined yet; retried', { group, err: (err as Error).message });
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}
