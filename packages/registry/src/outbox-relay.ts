// Publishes the registry outbox: right after a change (kick) and periodically as a safety net for
// changes made while Kafka was unreachable or by a process that stopped before publishing.

export interface OutboxRelay {
  /** Starts a drain now, or right after the one in progress. */
  kick(): void;
  /** Resolves when no drain is running or queued. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export function createOutboxRelay(options: {
  readonly drain: () => Promise<number>;
  readonly intervalMs: number;
  readonly onError: (e: unknown) => void;
}): OutboxRelay {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const run = (): void => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = options
      .drain()
      .then(() => undefined, options.onError)
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          run();
        }
      });
  };
  const timer = setInterval(run, options.intervalMs);
  timer.unref();
  return {
    kick: run,
    async idle() {
      while (running) await running;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      while (running) await running;
    },
  };
}
