// Memory settings of the hub's Node processes (README, Configuration, "Memory of the services"), set
// where they are launched: `npm start` (cli.ts), `npm run hubctl`, and the benchmarks (bench/load.ts
// startNode), so benchmarks measure what production runs. Issue 16 item 4: <= 250 MB RSS each.
//
// Why flags at all: the consumers hold a bounded amount of data (fetch sizes and queues in
// packages/event-log, services/projector, hubctl rebuild), but V8 sizes its heap from the machine's
// memory (a limit of several GiB on a large host) and, with that much room, lets the old generation
// grow to several times what is live before it collects (heap growing factor up to 4). A limit below
// 256 MiB makes V8 use its small-device factor (1.3) and collect instead of grow. The semi-space is
// set explicitly: V8 would derive it from the smaller limit (1 MiB at a 512 MiB limit) and then
// promote short-lived batch objects into the old generation, costing throughput.

export type HubProcess = 'ingress' | 'projector' | 'dispatcher' | 'prober' | 'hubctl';

interface HeapSettings {
  /** --max-old-space-size: V8's old generation, in MiB; reaching it is fatal, so well above what is live. */
  readonly oldSpaceMiB: number;
  /** --max-semi-space-size: one of the young generation's semi-spaces, in MiB. */
  readonly semiSpaceMiB: number;
}

const HEAP: Readonly<Record<HubProcess, HeapSettings>> = {
  ingress: { oldSpaceMiB: 160, semiSpaceMiB: 16 },
  projector: { oldSpaceMiB: 160, semiSpaceMiB: 16 },
  dispatcher: { oldSpaceMiB: 160, semiSpaceMiB: 16 },
  prober: { oldSpaceMiB: 128, semiSpaceMiB: 4 },
  hubctl: { oldSpaceMiB: 160, semiSpaceMiB: 16 },
};

/** Node flags of a hub process, placed before its script. */
export function nodeMemoryFlags(process: HubProcess): string[] {
  const heap = HEAP[process];
  return [`--max-old-space-size=${heap.oldSpaceMiB}`, `--max-semi-space-size=${heap.semiSpaceMiB}`];
}

/**
 * Environment of a hub process: glibc gives every thread that allocates an arena of its own (up to 8
 * per core), and V8's and libuv's worker threads each keep freed memory in theirs; two arenas keep
 * the freed Buffers of fetches and pages reusable instead of spread over many.
 */
export const MEMORY_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

/** The hub process a script is (services/<name>/src/main.ts, hubctl's main.ts), if it is one. */
export function hubProcessOf(script: string): HubProcess | undefined {
  const service = /services[\\/](ingress|projector|dispatcher|prober)[\\/]src[\\/]main\.ts$/.exec(script)?.[1];
  if (service) return service as HubProcess;
  return /packages[\\/]hubctl[\\/]src[\\/]main\.ts$/.test(script) ? 'hubctl' : undefined;
}
