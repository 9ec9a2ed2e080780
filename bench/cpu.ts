import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// CPU time of the benchmarks' processes and profiles of the benchmark process itself.

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU seconds of a process and of its children that ended and were waited for (cutime and cstime,
 * proc(5)): a child's CPU moves to its parent's count when it is reaped, so the sum over a process
 * tree never falls when a child exits.
 */
export function cpuSecondsWithReapedChildren(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_SECOND;
}

/** /proc/PID/stat's fields after the command name, which is in parentheses and may contain spaces: utime is index 11 (the 14th field of the line), in clock ticks. */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

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

/**
 * CPU seconds used so far by every local Postgres process (server and backends), from /proc. A
 * backend that ended (a pool closing an idle connection) is counted through the postmaster that
 * reaped it: summing the live backends alone made the figure fall, even below zero, when one ended
 * inside a measured window.
 */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') total += cpuSecondsWithReapedChildren(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}
