// Memory settings of the hub's Node processes (docs/how-to/bound-memory.md), set
// where they are launched: `npm start` (cli.ts), `npm run hubctl`, and the benchmarks (bench/load.ts
// startNode), so benchmarks measure what production runs. Target: <= 250 MB RSS each (bench/README.md, scale).
//
// Why flags at all: the consumers hold a bounded amount of data (fetch sizes and queues in
// packages/event-log, services/projector, hubctl rebuild), but V8 sizes its heap from the machine's
// memory: on a large host 64 MiB semi-spaces (128-192 MiB of young generation) and an old generation
// let grow to up to four times what is live before it collects. 16 MiB semi-spaces and an old-space
// limit of at most 256 MiB (V8's small-heap growing factor, 1.3) keep every process under 250 MB;
// the price is garbage-collection CPU (README: about a third more per projected or rebuilt event).

export type HubProcess = 'ingress' | 'projector' | 'dispatcher' | 'prober' | 'hubctl';

interface HeapSettings {
  /** --max-old-space-size: V8's old generation, in MiB; reaching it is fatal, so well above what is live. */
  readonly oldSpaceMiB: number;
  /** --max-semi-space-size: one of the young generation's semi-spaces, in MiB. */
  readonly semiSpaceMiB: number;
  /**
   * --initial-old-space-size: below this many MiB of old generation V8 runs no full collection (an
   * embedder-configured initial size is also the floor of its allocation limit). Without it the limit
   * sits only its minimum step (about 17 MiB here) above what is live, which is less than the young
   * generation promotes between two scavenges under load, so V8 starts incremental marking again as
   * soon as a full collection ends: under durable PATCHes the projector ran 2-3 mark-compacts a
   * second (`--trace-gc`), and concurrent marking and sweeping on its helper threads were about a third
   * of its CPU. A fixed floor, not a growing factor (--heap-growing-percent), because it adds nothing
   * once what is live is large (a table of 500k locations): RSS stays bounded by what the old rule
   * allowed or by the floor, whichever is more.
   */
  readonly oldSpaceFloorMiB?: number;
}

// 256 MiB is the highest limit V8 still grows by its small-heap factor (1.3), so a higher limit costs
// no RSS while what is live stays small; and reaching it is fatal, so the margin matters: the ingress
// holds the list pages it is building (2-5 MB for 1,000 locations, one per Postgres connection),
// hubctl's list commands what the operator asked for (--limit).
// hubctl's young generation is halved: its rebuild's native memory outside V8's heap swings by up to
// 40 MiB from run to run, and at 16 MiB semi-spaces its peak RSS at 200k-500k locations reached
// 237-249 MiB in 4 of 14 measurements (README, Benchmarks, Scale); at 8, 196-221 MiB, for a few
// µs more CPU per rebuilt event.
// The ingress's and projector's floors: the CPU per durable PATCH and RSS at full PATCH load measured
// by `BENCH_MEMORY_PROBE=1 BENCH_CPU_BY_PROCESS=1 npm run bench -- location-patch` with floors 0, 64,
// 80, 96 and 128 MiB, and the RSS while catching up 500,000 locations (`npm run bench -- scale 500000`;
// docs/explanation/performance.md, Garbage collection under PATCH load): at 96 the projector reached
// 239-241 MiB there, over the target; at 64, 217.
const HEAP: Readonly<Record<HubProcess, HeapSettings>> = {
  ingress: { oldSpaceMiB: 256, semiSpaceMiB: 16, oldSpaceFloorMiB: 80 },
  projector: { oldSpaceMiB: 256, semiSpaceMiB: 16, oldSpaceFloorMiB: 64 },
  dispatcher: { oldSpaceMiB: 256, semiSpaceMiB: 16 },
  prober: { oldSpaceMiB: 128, semiSpaceMiB: 4 },
  hubctl: { oldSpaceMiB: 256, semiSpaceMiB: 8 },
};

/** Node flags of a hub process, placed before its script. */
export function nodeMemoryFlags(process: HubProcess): string[] {
  const heap = HEAP[process];
  const floor = heap.oldSpaceFloorMiB === undefined ? [] : [`--initial-old-space-size=${heap.oldSpaceFloorMiB}`];
  return [`--max-old-space-size=${heap.oldSpaceMiB}`, `--max-semi-space-size=${heap.semiSpaceMiB}`, ...floor];
}

/**
 * Environment of a hub process: glibc gives every thread that allocates an arena of its own (up to 8
 * per core), each keeping freed memory; and once a fetch-sized Buffer is freed it raises its mmap
 * threshold, so later ones stay in the arenas instead of being returned. A fixed threshold returns them.
 */
export const MEMORY_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

/** The hub process a script is (services/<name>/src/main.ts, hubctl's main.ts), if it is one. */
export function hubProcessOf(script: string): HubProcess | undefined {
  const service = /services[\\/](ingress|projector|dispatcher|prober)[\\/]src[\\/]main\.ts$/.exec(script)?.[1];
  if (service) return service as HubProcess;
  return /packages[\\/]hubctl[\\/]src[\\/]main\.ts$/.test(script) ? 'hubctl' : undefined;
}
