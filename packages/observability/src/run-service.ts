// The lifecycle every service's main.ts shares: start, stop once on SIGINT/SIGTERM, exit non-zero
// with a readable message when configuration or start-up fails, or when the stop outlasts its deadline.

export interface StoppableService {
  stop(): Promise<void>;
}

/**
 * How long a stop may take before the process exits 1 anyway: inside the 25 s a Kubernetes pod has
 * after its preStop sleep (docs/how-to/deploy-kubernetes.md, Stopping), so the service says why
 * rather than being SIGKILLed. Each part of a stop has bounds of its own (an append's timeout, a
 * consumer's STOP_FETCH_WAIT_MS); this one holds for a dependency that hangs instead of failing (a
 * frozen broker keeps its connections open and answers nothing).
 */
export const STOP_DEADLINE_MS = 20_000;

export async function runService(start: () => Promise<StoppableService>, options: { readonly stopDeadlineMs?: number } = {}): Promise<void> {
  let service: StoppableService;
  try {
    service = await start();
  } catch (e) {
    const err = e as Error;
    process.stderr.write(`${err.name === 'ConfigError' || err.name === 'KafkaAccessError' ? err.message : err.stack ?? String(e)}\n`);
    process.exit(1);
  }
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    const deadlineMs = options.stopDeadlineMs ?? STOP_DEADLINE_MS;
    setTimeout(() => {
      process.stderr.write(`stop did not finish within ${deadlineMs} ms; exiting\n`);
      process.exit(1);
    }, deadlineMs).unref();
    service.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        process.stderr.write(`stop failed: ${String(e)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
