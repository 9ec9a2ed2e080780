import { getHeapSpaceStatistics } from 'node:v8';

// Preloaded into a service by the benchmarks (node --import, see load.ts memoryProbe): where the
// process's memory is when its RSS peaks. Every 200 ms it reads process.memoryUsage() and V8's
// spaces; whenever the RSS passed its previous peak by 1 MiB it writes one line to stderr:
//   memory-probe {"rss":..,"heapTotal":..,"heapUsed":..,"external":..,"arrayBuffers":..,"newSpace":..,"oldSpace":..,...}
// in MiB. RSS minus heapTotal minus external is what neither V8's heap nor Buffers account for
// (code, stacks, malloc'd memory of the runtime and glibc's free lists).
const MiB = 1024 * 1024;
let peak = 0;
const timer = setInterval(() => {
  const m = process.memoryUsage();
  if (m.rss < peak + MiB) return;
  peak = m.rss;
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
  const figures = {
    rss: m.rss,
    heapTotal: m.heapTotal,
    heapUsed: m.heapUsed,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    newSpace: (spaces['new_space'] ?? 0) + (spaces['new_large_object_space'] ?? 0),
    oldSpace: spaces['old_space'] ?? 0,
    largeObjectSpace: spaces['large_object_space'] ?? 0,
    codeSpace: spaces['code_space'] ?? 0,
  };
  process.stderr.write(`memory-probe ${JSON.stringify(Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round((v / MiB) * 10) / 10])))}\n`);
}, 200);
timer.unref();
