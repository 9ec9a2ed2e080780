import type { BatchOutcome, FailureKind, PositionsMismatch, QuarantinedRecord, QuarantineStore } from '@hub/core';
import { Counter, Gauge, type HealthProblem, type Logger, type Registry } from '@hub/observability';
import { RetryLater, failureReason } from './poison-proof.ts';

// What a consumer group shows an operator about records it could not apply and partitions it cannot
// move (README, Observability): metrics, /healthz problems, the backoff of a waiting partition and the
// re-drives an operator asked for (hubctl quarantine redrive).

export interface ConsumerWatchOptions {
  readonly group: string;
  readonly metrics: Registry;
  readonly logger: Logger;
  readonly quarantine: QuarantineStore;
  /** A partition on one offset for longer than this is stuck: a metric, and /healthz 503. */
  readonly stuckAfterMs: number;
  readonly backoff?: { readonly firstMs: number; readonly maxMs: number };
  readonly now?: () => number;
}

interface Standing {
  readonly offset: string;
  readonly since: number;
  failures: number;
  reason?: string;
}

export interface ConsumerWatch {
  /**
   * Runs one partition batch's work. On a failure that is not the record's it answers the backoff
   * (exponential) the partition waits before the same batch is fetched again (the event log pauses
   * it): the consumer neither skips the batch nor restarts in a loop. Never throws.
   */
  guard(batch: { topic: string; partition: number; firstOffset: string }, work: () => Promise<void>): Promise<BatchOutcome>;
  /**
   * The event log found the group's stored positions do not belong to the current topics (or, with
   * none, that they match again): /healthz down with the fix, hub_consumer_positions_mismatch, and one
   * error line per change.
   */
  positionsMismatch(mismatches: readonly PositionsMismatch[]): void;
  /**
   * After a rebalance: a partition no longer assigned is no longer this member's to wait on (its
   * new owner reports it), so it stops counting as stuck here.
   */
  assigned(assignment: Readonly<Record<string, readonly number[]>>): void;
  /**
   * What a subscription reports to the watch (mismatched positions, start, assignment) and its lag,
   * to spread into eventLog.subscribe's options: the same for every consumer.
   */
  subscriptionHooks(lag: Gauge<'group' | 'topic' | 'partition'>): {
    onMismatch(found: readonly PositionsMismatch[]): void;
    onStarted(): void;
    onAssigned(assignment: Readonly<Record<string, readonly number[]>>): void;
    onLag(topic: string, partition: number, records: number): void;
  };
  /** Counts records quarantined (the counter; the gauge reads Postgres). */
  quarantined(topic: string, n: number): void;
  /** /healthz problems: quarantined records (degraded), partitions stuck beyond the bound (down). */
  problems(): Promise<HealthProblem[]>;
  /**
   * Applies the re-drives an operator asked for, with `redrive` (the consumer's own apply path), every
   * `everyMs`; stop() ends it.
   */
  startRedrives(redrive: (r: QuarantinedRecord) => Promise<'redriven' | 'superseded'>, classify: (err: unknown) => FailureKind, everyMs?: number): void;
  stop(): void;
}

// Long because: the watch's methods (batch outcomes, quarantine, stuck partitions, redrives) share
// each partition's standing and the group's metrics; each method is short.
export function consumerWatch(options: ConsumerWatchOptions): ConsumerWatch {
  const { group, metrics, logger, quarantine } = options;
  const now = options.now ?? Date.now;
  const backoff = options.backoff ?? { firstMs: 200, maxMs: 30_000 };
  const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;
  let mismatches: readonly PositionsMismatch[] = [];

  const shared = sharedMetrics(metrics, quarantine);
  const { quarantinedTotal, mismatchGauge } = shared;
  const standing = new Map<string, Standing & { topic: string; partition: number }>();
  const watched: WatchedGroup = { group, standing, stuckAfterMs: options.stuckAfterMs, now };
  shared.watches.add(watched);
  const fix = `hubctl positions reset --consumer ${group.startsWith('projector') ? 'projector' : 'dispatcher'}`;

  let redriveTimer: NodeJS.Timeout | undefined;
  const watch: ConsumerWatch = {
    async guard(batch, work) {
      const k = key(batch.topic, batch.partition);
      const before = standing.get(k);
      // The same offset as the failed attempt keeps its first time: how long the partition waits.
      const s = before && before.offset === batch.firstOffset ? before : { topic: batch.topic, partition: batch.partition, offset: batch.firstOffset, since: now(), failures: 0 };
      standing.set(k, s);
      try {
        await work();
        standing.delete(k);
        if (s.failures > 0) logger.info('partition moves again', { group, topic: batch.topic, partition: batch.partition, offset: batch.firstOffset, failures: s.failures });
        return undefined;
      } catch (e) {
        s.failures++;
        s.reason = failureReason(e instanceof RetryLater ? e.cause : e);
        const wait = Math.min(backoff.maxMs, backoff.firstMs * 2 ** Math.min(s.failures - 1, 20));
        const kind = e instanceof RetryLater ? e.kind : 'unknown';
        logger.log(kind === 'dependency' ? 'warn' : 'error', 'batch not applied; the partition waits and is retried', {
          group,
          topic: batch.topic,
          partition: batch.partition,
          offset: batch.firstOffset,
          failureKind: kind,
          failures: s.failures,
          retryInMs: wait,
          reason: s.reason,
        });
        return { retryAfterMs: wait };
      }
    },
    positionsMismatch(found) {
      const had = mismatches.length > 0;
      for (const m of mismatches) mismatchGauge.set({ group, topic: m.topic }, 0);
      for (const m of found) mismatchGauge.set({ group, topic: m.topic }, 1);
      mismatches = found;
      if (found.length === 0) return void (had && logger.info('stored positions match the topics again; consuming', { group }));
      logger.error(`consumer ${group} refuses to run: its stored positions do not belong to the current topics; run ${fix}`, { group, mismatches: found });
    },
    assigned(assignment) {
      for (const [k, s] of standing) if (!assignment[s.topic]?.includes(s.partition)) standing.delete(k);
    },
    subscriptionHooks(lag) {
      return {
        onMismatch: (found) => watch.positionsMismatch(found),
        onStarted: () => watch.positionsMismatch([]),
        onAssigned: (assignment) => watch.assigned(assignment),
        onLag: (topic, partition, records) => lag.set({ group, topic, partition: String(partition) }, records),
      };
    },
    quarantined(topic, n) {
      if (n > 0) quarantinedTotal.inc({ group, topic }, n);
    },
    async problems() {
      const problems: HealthProblem[] = mismatches.map((m) => ({ severity: 'down', reason: `consumer ${group} refuses to run on ${m.topic}: ${m.reason}; run ${fix}` }));
      const t = now();
      for (const s of standing.values()) {
        if (t - s.since <= options.stuckAfterMs) continue;
        problems.push({
          severity: 'down',
          reason: `consumer ${group} stuck on ${s.topic} partition ${s.partition} at offset ${s.offset} for ${Math.round((t - s.since) / 1000)} s: ${s.reason ?? 'the batch has not finished'}`,
        });
      }
      for (const c of await quarantine.openCounts()) {
        if (c.consumerGroup !== group) continue;
        problems.push({ severity: 'degraded', reason: `${c.count} record(s) of ${c.topic} quarantined by consumer ${group}: hubctl quarantine list --group ${group}` });
      }
      return problems;
    },
    startRedrives(redrive, classify, everyMs = 1_000) {
      let running = false;
      redriveTimer = setInterval(() => {
        if (running) return;
        running = true;
        void (async () => {
          for (const r of await quarantine.pendingRedrives(group, 100)) {
            try {
              const state = await redrive(r);
              await quarantine.resolveRedrive(r.id, { state });
              logger.info('quarantined record re-driven', { group, id: r.id, topic: r.record.topic, partition: r.record.partition, offset: r.record.offset, state });
            } catch (e) {
              // A dependency failure leaves the request for the next round; a record failure puts
              // the record back in quarantine with the new reason.
              if (classify(e) !== 'record') throw e;
              await quarantine.resolveRedrive(r.id, { state: 'quarantined', reason: failureReason(e) });
              logger.warn('quarantined record failed again on re-drive', { group, id: r.id, reason: failureReason(e) });
            }
          }
        })()
          .catch((e: unknown) => logger.warn('re-drives not applied; retried', { group, err: e }))
          .finally(() => (running = false));
      }, everyMs);
    },
    stop() {
      clearInterval(redriveTimer);
      shared.watches.delete(watched);
    },
  };
  return watch;
}

interface WatchedGroup {
  readonly group: string;
  readonly standing: ReadonlyMap<string, Standing & { topic: string; partition: number }>;
  readonly stuckAfterMs: number;
  readonly now: () => number;
}

interface SharedMetrics {
  readonly quarantinedTotal: Counter<'group' | 'topic'>;
  readonly mismatchGauge: Gauge<'group' | 'topic'>;
  readonly watches: Set<WatchedGroup>;
}

// One set of metrics per registry, whatever the number of consumer groups a service runs (the
// dispatcher: the delivery consumer and the registry consumer); the gauges read every group's state.
const sharedByRegistry = new WeakMap<Registry, SharedMetrics>();

function sharedMetrics(metrics: Registry, quarantine: QuarantineStore): SharedMetrics {
  const found = sharedByRegistry.get(metrics);
  if (found) return found;
  const watches = new Set<WatchedGroup>();
  const quarantinedTotal = new Counter({ name: 'hub_consumer_quarantined_total', help: 'Records a consumer quarantined instead of applying (a data or constraint error, or not decodable)', labelNames: ['group', 'topic'], registers: [metrics] });
  new Gauge({
    name: 'hub_consumer_quarantined',
    help: 'Records in quarantine waiting for an operator (hubctl quarantine), read from Postgres',
    labelNames: ['group', 'topic'],
    registers: [metrics],
    async collect() {
      const counts = await quarantine.openCounts().catch(() => undefined);
      if (!counts) return;
      this.reset();
      const groups = new Set([...watches].map((w) => w.group));
      for (const c of counts) if (groups.has(c.consumerGroup)) this.set({ group: c.consumerGroup, topic: c.topic }, c.count);
    },
  });
  new Gauge({
    name: 'hub_consumer_stuck_seconds',
    help: 'Seconds a partition has been on the same offset while failing or not finishing (0 for a partition that moves)',
    labelNames: ['group', 'topic', 'partition'],
    registers: [metrics],
    collect() {
      this.reset();
      for (const w of watches) {
        const t = w.now();
        for (const s of w.standing.values()) this.set({ group: w.group, topic: s.topic, partition: String(s.partition) }, s.failures > 0 || t - s.since > w.stuckAfterMs ? (t - s.since) / 1000 : 0);
      }
    },
  });
  const mismatchGauge = new Gauge({ name: 'hub_consumer_positions_mismatch', help: 'Topics whose stored positions belong to another cluster or topic (1): the consumer refuses to run until hubctl positions reset', labelNames: ['group', 'topic'], registers: [metrics] });
  const shared = { quarantinedTotal, mismatchGauge, watches };
  sharedByRegistry.set(metrics, shared);
  return shared;
}
