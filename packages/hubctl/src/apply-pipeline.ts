// The rebuild's apply pipeline (rebuild.ts): fetching and decoding run ahead of applying, bounded.

/**
 * Ordered per partition, bounded in concurrency and in the bytes of the batches it holds (queued or
 * being applied): what a rebuild holds decoded is a few times `maxBytes`, however far behind Postgres
 * is. enqueue() resolves once the work is taken, waiting (first come, first taken) while the batch
 * would take the bytes held above `maxBytes`; a batch larger than `maxBytes` is taken once nothing
 * else is held, so an oversized batch never stops the rebuild. A failure is reported once and later
 * work is dropped.
 * Long because: a small scheduler whose admission, slots and release share its counters and queues;
 * each part is a few lines.
 */
export function applyPipeline(concurrency: number, maxBytes: number, onError: (e: Error) => void) {
  const chains = new Map<number, Promise<void>>();
  let running = 0;
  let held = 0;
  let failed = false;
  const waitingForSlot: Array<() => void> = [];
  const waitingForRoom: Array<{ readonly bytes: number; readonly take: () => void }> = [];
  const fits = (bytes: number): boolean => held === 0 || held + bytes <= maxBytes;
  // Takes waiting batches in their order while they fit (all of them, to be dropped, after a failure).
  const admit = (): void => {
    for (let next = waitingForRoom[0]; next && (failed || fits(next.bytes)); next = waitingForRoom[0]) {
      waitingForRoom.shift();
      if (!failed) held += next.bytes;
      next.take();
    }
  };
  const slot = async (): Promise<void> => {
    while (running >= concurrency) await new Promise<void>((r) => waitingForSlot.push(r));
    running++;
  };
  const release = (): void => {
    running--;
    waitingForSlot.shift()?.();
  };
  return {
    async enqueue(partition: number, bytes: number, work: () => Promise<unknown>): Promise<void> {
      if (failed) return;
      if (waitingForRoom.length === 0 && fits(bytes)) held += bytes;
      else {
        await new Promise<void>((take) => waitingForRoom.push({ bytes, take }));
        if (failed) return;
      }
      const previous = chains.get(partition) ?? Promise.resolve();
      const next = previous.then(async () => {
        if (failed) return;
        await slot();
        if (failed) return release();
        try {
          await work();
        } catch (e) {
          failed = true;
          onError(e instanceof Error ? e : new Error(String(e)));
          admit();
        } finally {
          release();
        }
      });
      chains.set(
        partition,
        next.finally(() => {
          held -= bytes;
          admit();
        }),
      );
    },
    /** Bytes of the batches queued or being applied. */
    heldBytes: (): number => held,
    /** Resolves when everything queued so far has been applied (or dropped after a failure). */
    async drain(): Promise<void> {
      await Promise.all(chains.values());
    },
  };
}
