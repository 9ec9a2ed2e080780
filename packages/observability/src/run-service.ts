// The lifecycle every service's main.ts shares: start, stop once on SIGINT/SIGTERM, exit non-zero
// with a readable message when configuration or start-up fails.

export interface StoppableService {
  stop(): Promise<void>;
}

export async function runService(start: () => Promise<StoppableService>): Promise<void> {
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
