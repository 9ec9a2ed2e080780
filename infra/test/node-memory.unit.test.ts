// The hub processes' heap flags (stack/node-memory.ts), run in a real Node: the ingress's and
// projector's old-generation floor keeps full collections rare while little is live and much is
// promoted (the projector under durable PATCHes: batches that outlive a scavenge or two), and the
// flags are ones this Node's V8 takes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { nodeMemoryFlags, type HubProcess } from '../stack/node-memory.ts';

// About 20 MiB live for good, then 300 batches of about 1 MiB, each kept through two scavenges (so it
// is promoted, as a projector's batch in flight is) and dropped two batches later: garbage that
// reaches the old generation while little is live. Prints the number of full (major) collections.
// The scavenges are asked for (--expose-gc), so the count does not hang on when V8 would scavenge.
const WORKLOAD = `
const { PerformanceObserver, constants } = await import('node:perf_hooks');
let majors = 0;
const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++; });
observer.observe({ entryTypes: ['gc'] });
const batch = (n) => Array.from({ length: n }, (_, i) => ({ uid: 'EVSE-' + i, status: 'AVAILABLE', connectors: [{ id: String(i) }] }));
const live = Array.from({ length: 20 }, () => batch(5000));
const held = [];
for (let round = 0; round < 300; round++) {
  held.push(batch(5000));
  if (held.length > 2) held.shift();
  globalThis.gc({ type: 'minor' });
  globalThis.gc({ type: 'minor' });
  if (round % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
}
await new Promise((resolve) => setTimeout(resolve, 50));
observer.disconnect();
process.stdout.write(JSON.stringify({ majors, live: live.length }));
`;

function majorCollections(flags: readonly string[]): number {
  const run = spawnSync(process.execPath, [...flags, '--expose-gc', '--input-type=module', '-e', WORKLOAD], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  return (JSON.parse(run.stdout) as { majors: number }).majors;
}

describe('node memory flags', () => {
  for (const service of ['ingress', 'projector'] as const satisfies readonly HubProcess[]) {
    it(`${service}: the old-generation floor cuts full collections at least in half while little is live`, () => {
      const flags = nodeMemoryFlags(service);
      assert.ok(flags.some((f) => /^--initial-old-space-size=\d+$/.test(f)), `${service} has a floor: ${flags.join(' ')}`);
      const withFloor = majorCollections(flags);
      const withoutFloor = majorCollections(flags.filter((f) => !f.startsWith('--initial-old-space-size=')));
      assert.ok(withoutFloor >= 4, `the workload makes V8 collect fully without the floor (${withoutFloor})`);
      assert.ok(withFloor * 2 <= withoutFloor, `${withFloor} full collections with the floor, ${withoutFloor} without`);
    });
  }
});
