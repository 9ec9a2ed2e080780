import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// CPU time of the benchmarks' processes and profiles of the benchmark process itself.

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may contain spaces: utime and stime
  // are the 14th and 15th fields of the line, in clock ticks.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * Runs fn, and when BENCH_PROFILE_DIR is set writes a CPU profile of this process while it ran
 * (for steps that run inside the benchmark process itself, such as the rebuild).
 */
export async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const dir = process.env['BENCH_PROFILE_DIR'];
  if (!dir) return fn();
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

/** CPU seconds used so far by every local Postgres process (server and backends), from /proc. */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') total += cpuSeconds(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}
