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
}

// 256 MiB is the highest limit V8 still grows by its small-heap factor (1.3), so a higher limit costs
// no RSS while what is live stays small; and reaching it is fatal, so the margin matters: the ingress
// holds the list pages it is building (2-5 MB for 1,000 locations, one per Postgres connection),
// hubctl's list commands what the operator asked for (--limit).
// hubctl's young generation is halved: its rebuild's native memory outside V8's heap swings by up to
// 40 MiB from run to run, and at 16 MiB semi-spaces its peak RSS at 200k-500k locations reached
// 237-249 MiB in 4 of 14 measurements (README, Benchmarks, Scale); at 8, 196-221 MiB, for a few
// µs more CPU per rebuilt event.
const HEAP: Readonly<Record<HubProcess, HeapSettings>> = {
  ingress: { oldSpaceMiB: 256, semiSpaceMiB: 16 },
  projector: { oldSpaceMiB: 256, semiSpaceMiB: 16 },
  dispatcher: { oldSpaceMiB: 256, semiSpaceMiB: 16 },
  prober: { oldSpaceMiB: 128, semiSpaceMiB: 4 },
  hubctl: { oldSpaceMiB: 256, semiSpaceMiB: 8 },
};

/** Node flags of a hub process, placed before its script. */
export function nodeMemoryFlags(process: HubProcess): string[] {
  const heap = HEAP[process];
  return [`--max-old-space-size=${heap.oldSpaceMiB}`, `--max-semi-space-size=${heap.semiSpaceMiB}`];
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
