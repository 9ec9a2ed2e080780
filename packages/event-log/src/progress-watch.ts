// A consumer that holds a partition but no longer fetches it makes no error and no log line: its lag
// only grows (reported for kafkajs as "holding one partition but not fetching from it"; other clients have
// had the same after a coordinator moved). Each subscription with stored positions checks every
// PROGRESS_CHECK_MS that every partition it was assigned either stands at the partition's end or
// moved since the last check; one that did neither twice in a row, with no batch of it handed to the
// handler in between and no backoff holding it, is stalled, and the subscription starts its consumer again
// (kafka-subscription.ts). Postgres's stored positions are the measure: they move only when a batch
// was applied, whatever the client reports.

/** How often a subscription checks its partitions' progress. */
export const PROGRESS_CHECK_MS = 30_000;

export interface ObservedPartition {
  readonly topic: string;
  readonly partition: number;
  /** The partition's end (its high watermark). */
  readonly end: bigint;
  /** The stored position (the next offset to apply); undefined when none is stored. */
  readonly position: bigint | undefined;
}

export interface StalledPartition extends ObservedPartition {
  /** Since when the position has not moved, in ms of the clock `check` was given. */
  readonly since: number;
}

export interface ProgressWatch {
  /** The partitions this member owns now: what it held before is forgotten. */
  assigned(assignment: Readonly<Record<string, readonly number[]>>): void;
  /** The partitions to observe (owned topics only). */
  partitions(): Array<{ topic: string; partition: number }>;
  /** The handler runs a batch of the partition (busy) or is done with it. */
  handling(topic: string, partition: number, busy: boolean): void;
  /** The handler asked the partition to wait until then (a backoff). */
  backingOff(topic: string, partition: number, until: number): void;
  /** One check: the partitions behind their end that have not moved since the previous check. */
  check(observed: readonly ObservedPartition[], now: number): StalledPartition[];
}

export function progressWatch(owned: ReadonlySet<string>): ProgressWatch {
  const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;
  let assignment: Array<{ topic: string; partition: number }> = [];
  const busy = new Set<string>();
  /** Partitions whose batch the handler was given since the last check: the client fetches them. */
  const active = new Set<string>();
  const waitUntil = new Map<string, number>();
  /** The position seen behind the end at the previous check, and since when. */
  const standing = new Map<string, { position: bigint | undefined; since: number }>();
  return {
    assigned(next) {
      assignment = Object.entries(next).flatMap(([topic, partitions]) => (owned.has(topic) ? partitions.map((partition) => ({ topic, partition })) : []));
      standing.clear();
      waitUntil.clear();
      active.clear();
    },
    partitions: () => assignment,
    handling(topic, partition, isBusy) {
      if (isBusy) {
        busy.add(key(topic, partition));
        active.add(key(topic, partition));
      } else busy.delete(key(topic, partition));
    },
    backingOff(topic, partition, until) {
      waitUntil.set(key(topic, partition), until);
    },
    check(observed, now) {
      const stalled: StalledPartition[] = [];
      const mine = new Set(assignment.map((a) => key(a.topic, a.partition)));
      for (const o of observed) {
        const k = key(o.topic, o.partition);
        if (!mine.has(k)) continue;
        const behind = o.end > (o.position ?? 0n);
        // Fetched but not applied is not this stall: its batch is being applied or failed since the
        // last check (a failing dependency), or it waits out a backoff.
        const excused = busy.has(k) || active.has(k) || (waitUntil.get(k) ?? 0) > now;
        if (!behind || excused) {
          standing.delete(k);
          continue;
        }
        const before = standing.get(k);
        if (before && before.position === o.position) stalled.push({ ...o, since: before.since });
        else standing.set(k, { position: o.position, since: now });
      }
      active.clear();
      return stalled;
    },
  };
}

export interface ProgressChecks {
  readonly everyMs: number;
  readonly watch: ProgressWatch;
  /** Each partition's end of a (physical) topic. */
  readonly ends: (topic: string) => Promise<ReadonlyMap<number, bigint>>;
  /** The stored positions of a (physical) topic. */
  readonly positions: (topic: string) => Promise<ReadonlyMap<number, bigint>>;
  /** Starts the consumer again; the next checks wait for it. */
  readonly onStalled: (stalled: readonly StalledPartition[]) => Promise<void>;
  /** A check that could not be made (Kafka or Postgres away): the next one tries again. */
  readonly onCheckFailed: (err: unknown) => void;
}

/** Checks every everyMs, one check at a time, until stop(). */
export function startProgressChecks(checks: ProgressChecks): { stop(): void } {
  let checking = false;
  const once = async (): Promise<void> => {
    const byTopic = new Map<string, number[]>();
    for (const { topic, partition } of checks.watch.partitions()) byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition]);
    const observed: ObservedPartition[] = [];
    for (const [topic, partitions] of byTopic) {
      // Positions before ends: a batch applied in between then reads as behind, never as a stall.
      const positions = await checks.positions(topic);
      const ends = await checks.ends(topic);
      for (const partition of partitions) observed.push({ topic, partition, end: ends.get(partition) ?? 0n, position: positions.get(partition) });
    }
    const stalled = checks.watch.check(observed, Date.now());
    if (stalled.length > 0) await checks.onStalled(stalled);
  };
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    once()
      .catch(checks.onCheckFailed)
      .finally(() => (checking = false));
  }, checks.everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
