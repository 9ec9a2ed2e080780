import { appendFileSync } from 'node:fs';
import { basename } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';

// Preloaded into a service to find what holds it up (README, Benchmarks, "What stalled the paced
// PATCHes"): `mkdir -p /tmp/stall-probe` and BENCH_NODE_OPTIONS="--import $PWD/bench/stall-probe.ts"
// (the ingress and projector of location-patch). Each process appends JSON lines to
// /tmp/stall-probe/<script>-<pid>.log: an event-loop stall over 15 ms (a 2 ms timer that came late)
// and a garbage collection over 5 ms (its kind: 1 scavenge, 4 mark-compact, 8 incremental), each with
// its wall-clock time in ms, to line up with BENCH_PACED_TRACE's late requests.
const dir = '/tmp/stall-probe';
const file = `${dir}/${basename(process.argv[1] ?? 'node')}-${process.pid}.log`;
const log = (entry: Record<string, unknown>): void => {
  try {
    appendFileSync(file, `${JSON.stringify({ t: Date.now(), ...entry })}\n`);
  } catch {
    // The directory is missing: the probe stays silent rather than disturb the service.
  }
};
let last = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  const late = now - last - 2;
  if (late > 15) log({ kind: 'loop', ms: Math.round(late) });
  last = now;
}, 2);
timer.unref();
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const detail: unknown = (entry as { detail?: unknown }).detail;
    const gcKind = typeof detail === 'object' && detail !== null && 'kind' in detail ? detail.kind : undefined;
    if (entry.duration > 5) log({ kind: 'gc', ms: Math.round(entry.duration), gcKind });
  }
}).observe({ entryTypes: ['gc'] });
