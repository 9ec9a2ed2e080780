/**
 * Group commit for the projector: batches submitted while a transaction is being prepared or runs
 * travel together in the next one. The event log hands the partitions of one fetch to onBatch side by
 * side, so what one fetch brought is applied in one transaction instead of one per partition (a
 * fetch under steady PATCH traffic holds a few events per partition: per-transaction overhead was
 * most of the projector's and Postgres's work). At most one item per key (partition) per round:
 * a later one waits for the next round, so a partition's batches stay in order. One round at a time.
 * A round that fails is retried batch by batch, so one batch that cannot be applied holds up only
 * its own partition, not every partition that shared its fetch.
 */
export function groupApply<T, R>(key: (item: T) => string | number, apply: (items: T[]) => Promise<R[]>) {
  interface Pending {
    readonly item: T;
    readonly resolve: (result: R) => void;
    readonly reject: (error: unknown) => void;
  }
  let pending: Pending[] = [];
  let running = false;
  let scheduled = false;
  const schedule = (): void => {
    if (scheduled || running) return;
    scheduled = true;
    setImmediate(() => void flush());
  };
  const flush = async (): Promise<void> => {
    scheduled = false;
    if (running || pending.length === 0) return;
    running = true;
    const keys = new Set<string | number>();
    const taken: Pending[] = [];
    const later: Pending[] = [];
    for (const p of pending) {
      const k = key(p.item);
      if (keys.has(k)) later.push(p);
      else {
        keys.add(k);
        taken.push(p);
      }
    }
    pending = later;
    try {
      const results = await apply(taken.map((p) => p.item));
      taken.forEach((p, i) => p.resolve(results[i] as R));
    } catch (e) {
      if (taken.length === 1) taken[0]?.reject(e);
      else {
        for (const p of taken) {
          try {
            const [result] = await apply([p.item]);
            p.resolve(result as R);
          } catch (err) {
            p.reject(err);
          }
        }
      }
    } finally {
      running = false;
      if (pending.length > 0) schedule();
    }
  };
  return {
    submit(item: T): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        pending.push({ item, resolve, reject });
        schedule();
      });
    },
  };
}
