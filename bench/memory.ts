import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MEMORY_ENV, nodeMemoryFlags, type HubProcess } from '../infra/stack/node-memory.ts';

// The benchmarks' side of bench/memory-probe.ts: preloading it, reading its lines, describing them.

/** Where a process's memory was when its RSS peaked (bench/memory-probe.ts), in MiB. */
export type MemoryFigures = Readonly<Record<'rss' | 'heapTotal' | 'heapUsed' | 'external' | 'arrayBuffers' | 'newSpace' | 'oldSpace' | 'largeObjectSpace' | 'codeSpace', number>>;

/**
 * The memory flags and environment a benchmark gives a hub process: those of `npm start`
 * (infra/stack/node-memory.ts); BENCH_DEFAULT_HEAP=1 gives none (V8's and glibc's defaults), and
 * BENCH_MEMORY_FLAGS="--max-semi-space-size=32 ..." gives those flags instead, to compare settings.
 */
export function benchMemorySettings(hubProcess: HubProcess | undefined): { flags: string[]; env: Record<string, string> } {
  if (!hubProcess || process.env['BENCH_DEFAULT_HEAP'] === '1') return { flags: [], env: {} };
  const override = process.env['BENCH_MEMORY_FLAGS'];
  return { flags: override !== undefined ? override.split(' ').filter(Boolean) : nodeMemoryFlags(hubProcess), env: { ...MEMORY_ENV } };
}

/** Node arguments that preload the memory probe (bench/memory-probe.ts). */
export const MEMORY_PROBE_ARGS: readonly string[] = ['--import', pathToFileURL(join(import.meta.dirname, 'memory-probe.ts')).href];

/** The figures of a memory-probe line, undefined for any other line. */
export function memoryProbeLine(line: string): MemoryFigures | undefined {
  return line.startsWith('memory-probe ') ? (JSON.parse(line.slice('memory-probe '.length)) as MemoryFigures) : undefined;
}

/** One line of where the memory is at the peak: `rss 212 = heap 150 (used 90, young 24, old 110) + external 12 + other 50 MiB`. */
export function describeMemory(m: MemoryFigures | undefined): string {
  if (!m) return 'no memory probe figures';
  const other = m.rss - m.heapTotal - m.external;
  return `rss ${m.rss.toFixed(0)} = heap ${m.heapTotal.toFixed(0)} (used ${m.heapUsed.toFixed(0)}, young ${m.newSpace.toFixed(0)}, old ${m.oldSpace.toFixed(0)}, large objects ${m.largeObjectSpace.toFixed(0)}) + external ${m.external.toFixed(0)} (Buffers ${m.arrayBuffers.toFixed(0)}) + other ${other.toFixed(0)} MiB`;
}


/** Resident set size of a process in MiB (Linux /proc). */
export function rssMiB(pid: number | undefined): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
}
