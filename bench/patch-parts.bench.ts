// The parts of a durable EVSE status PATCH, each run alone against the stack's broker and Postgres,
// with the CPU of every process it loads: what the hub's design spends per PATCH at least, part by
// part, whatever the code around it (docs/explanation/performance.md, What a durable PATCH is made of).
// - append: `concurrency` callers of one EVSE-patched event each (the ingress's group commit, acks=all);
//   this process (the client) and the broker.
// - consume: a group subscribing from the start until every event is decoded (the projector's fetch);
//   this process and the broker.
// - apply: the consumed events applied to the read model in rounds of `round` events, partitions side
//   by side, as the projector's group commit does (its three round trips and one commit a round, the
//   stored documents loaded, merged and written back); this process (the projector's store code) and
//   Postgres. No snapshot.
// - snapshot: each round's changed locations appended to the snapshot topic (docs/decisions/0014);
//   this process and the broker.
// Before them, appends and a consumer run for `warm-up` seconds against a topic of their own: the
// broker's JVM compiles its hot paths in the first tens of seconds of load (location-patch.bench.ts).
// Run: npm run bench -- patch-parts [events=100000] [concurrency=50] [round=200] [warm-up seconds=20]
// BENCH_PROFILE_DIR=DIR writes a CPU profile of the apply and of the snapshot phase (bench/cpu.ts).
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { ObjectChange, PartitionBatch, ProjectedRecord, Subscription } from '@hub/core';
import { projectedRecord } from '@hub/core';
import { locationEventTypes, newEvent, topicName, topics, type HubEvent } from '@hub/events';
import { objectKey, pathSubject } from '@hub/modules';
import { appendSnapshot } from '@hub/service-kit';
import { postgresReadModelStore } from '@hub/store';
import { createTestStack, repoRoot } from '@hub/testing';
import { cpuSeconds, postgresCpuSeconds, profiled } from './cpu.ts';
import { printFigures } from './figures.ts';

const total = Number(process.argv[2] ?? 100_000);
const concurrency = Number(process.argv[3] ?? 50);
const round = Number(process.argv[4] ?? 200);
const warmupSeconds = Number(process.argv[5] ?? 20);
const locations = 1000;
const brokerPid = Number(process.env['TEST_BROKER_PID'] ?? 0);
const stack = await createTestStack('bench_parts');
const store = postgresReadModelStore(stack.pool);
const template = JSON.parse(readFileSync(join(repoRoot, '..', 'shared', 'ocpi-2.2.1', 'examples', 'location_example.json'), 'utf8')) as Record<string, unknown>;
const pathOf = (n: number) => ({ countryCode: 'NL', partyId: 'BEN', id: `LOC-${n % locations}` });
const statuses = ['AVAILABLE', 'CHARGING', 'BLOCKED', 'OUTOFORDER'];

interface Part { readonly label: string; readonly events: number; readonly seconds: number; readonly self: number; readonly broker: number; readonly postgres: number }

/** CPU µs per event of this process, the broker and Postgres while `work` ran. */
async function measure(label: string, events: number, work: () => Promise<unknown>): Promise<Part> {
  const self = process.cpuUsage();
  const broker = brokerPid > 0 ? cpuSeconds(brokerPid) : 0;
  const postgres = postgresCpuSeconds();
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(self);
  const perEvent = (s: number) => (s * 1e6) / events;
  return {
    label, events, seconds,
    self: (used.user + used.system) / events,
    broker: brokerPid > 0 ? perEvent(cpuSeconds(brokerPid) - broker) : Number.NaN,
    postgres: perEvent(postgresCpuSeconds() - postgres),
  };
}

const patchEvent = (n: number): HubEvent =>
  newEvent({
    type: locationEventTypes.evsePatched,
    source: 'ingress',
    subject: pathSubject({ ...pathOf(n), evseUid: '3256' }),
    key: objectKey(pathOf(n)),
    data: { status: statuses[n % 4], last_updated: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString() },
    correlationId: crypto.randomUUID(),
    requestId: crypto.randomUUID(),
    from: 'NL/BEN',
  });

/** Every record of the topic from its start, decoded, as the projector's records of each partition. */
async function consumeAll(expected: number, group: string, topic: string = topics.locations): Promise<{ subscription: Subscription; byPartition: Map<number, ProjectedRecord[]> }> {
  const byPartition = new Map<number, ProjectedRecord[]>();
  let handled = 0;
  let done: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (done = resolve));
  const subscription = await stack.eventLog.subscribe({
    group, topics: [topic], ephemeral: true,
    onBatch: async (batch) => {
      const records = byPartition.get(batch.partition) ?? [];
      for (const r of batch.records) records.push(projectedRecord(r.offset, r.event));
      byPartition.set(batch.partition, records);
      handled += batch.records.length;
      if (handled >= expected) done();
    },
  });
  await all;
  return { subscription, byPartition };
}

/** The records in rounds of about `round` events, each round holding every partition's next share. */
function rounds(byPartition: Map<number, ProjectedRecord[]>, count: number): PartitionBatch[][] {
  const partitions = [...byPartition.keys()].sort((a, b) => a - b);
  const share = Math.max(1, Math.round(round / partitions.length));
  const out: PartitionBatch[][] = [];
  for (let i = 0; i * share < count; i++) {
    const batches = partitions
      .map((partition) => ({ partition, records: (byPartition.get(partition) ?? []).slice(i * share, (i + 1) * share) }))
      .filter((b) => b.records.length > 0);
    if (batches.length === 0) break;
    out.push(batches);
  }
  return out;
}

/** Appends by `concurrency` callers until `until`, then reads them all back: the broker's and this process's code warmed. */
async function warmUp(until: number): Promise<void> {
  const topic = `bench.patch-parts.warm-up.${Date.now().toString(36)}`;
  const admin = stack.eventLog.topicAdmin();
  // The stack's event log prefixes every topic it appends to (TOPIC_PREFIX).
  await admin.createTopics([{ name: topicName(stack.topicPrefix, topic), partitions: 12, replicationFactor: 1 }], { waitForLeaders: true });
  await admin.close();
  let appended = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < until) await stack.eventLog.append(topic, [patchEvent(appended++)]);
  }));
  const { subscription } = await consumeAll(appended, `bench-parts-warm-up-${Date.now()}`, topic);
  await subscription.stop();
}

const parts: Part[] = [];
try {
  await warmUp(Date.now() + warmupSeconds * 1000);
  // The locations, projected first (not measured).
  const puts = Array.from({ length: locations }, (_, n) => newEvent({ type: locationEventTypes.locationPut, source: 'bench', subject: pathSubject(pathOf(n)), key: objectKey(pathOf(n)), data: { ...template, country_code: 'NL', party_id: 'BEN', id: `LOC-${n}` } }));
  await stack.eventLog.append(topics.locations, puts);
  const seeded = await consumeAll(locations, `bench-parts-seed-${Date.now()}`);
  await seeded.subscription.stop();
  for (const batches of rounds(seeded.byPartition, locations)) await store.applyBatches('locations', batches);

  let next = 0;
  parts.push(await measure('append (ingress group commit, acks=all)', total, () =>
    Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < total) await stack.eventLog.append(topics.locations, [patchEvent(next++)]);
    })),
  ));
  let consumed: Awaited<ReturnType<typeof consumeAll>> | undefined;
  parts.push(await measure('consume (projector fetch and decode)', total + locations, async () => (consumed = await consumeAll(total + locations, `bench-parts-${Date.now()}`))));
  await consumed?.subscription.stop();
  // Only the PATCHes: the PUTs are applied already (the store would skip them by position anyway).
  const patches = new Map([...(consumed?.byPartition ?? new Map<number, ProjectedRecord[]>())].map(([p, records]) => [p, records.filter((r) => r.type === locationEventTypes.evsePatched)]));
  const planned = rounds(patches, total);
  const changed: ObjectChange[][] = [];
  let applied = 0;
  parts.push(await measure(`apply (rounds of ${round}, no snapshot)`, total, () =>
    profiled('patch-parts-apply', async () => {
      for (const batches of planned) {
        const outcomes = await store.applyBatches('locations', batches, undefined, async (changes) => void changed.push([...changes]));
        applied += outcomes.reduce((n, o) => n + o.applied, 0);
      }
    }),
  ));
  parts.push(await measure('snapshot (changed locations to the snapshot topic)', total, () =>
    profiled('patch-parts-snapshot', async () => {
      for (const changes of changed) await appendSnapshot(stack.eventLog, 'locations', changes, 'projector');
    }),
  ));
  // A PATCH rejected or superseded costs less than one applied: the figures hold only if every one applied.
  if (applied !== total) throw new Error(`applied ${applied} of ${total} PATCHes`);
  process.stdout.write(`rounds: ${planned.length}, ${(total / planned.length).toFixed(0)} events each on average, ${(changed.reduce((n, c) => n + c.length, 0) / planned.length).toFixed(0)} locations changed each\n`);
} finally {
  await stack.cleanup();
}
const pad = (s: string, n: number) => s.padEnd(n);
const fmt = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(1)).padStart(8);
process.stdout.write(`${pad('part', 54)}${'events/s'.padStart(10)}${'this µs'.padStart(8)}${'broker'.padStart(8)}${'postgres'.padStart(8)}  (CPU per event)\n`);
for (const p of parts) process.stdout.write(`${pad(p.label, 54)}${(p.events / p.seconds).toFixed(0).padStart(10)}${fmt(p.self)}${fmt(p.broker)}${fmt(p.postgres)}\n`);
process.stdout.write(`(${total} EVSE status PATCH events over ${locations} locations, ${concurrency} appenders, after ${warmupSeconds} s of warm-up, ${new Date().toISOString()}, node ${process.version})\n`);
const slug = (label: string) => label.split(' ')[0] ?? label;
printFigures(Object.fromEntries(parts.flatMap((p) => [[`${slug(p.label)}_self_cpu_us_per_event`, p.self], [`${slug(p.label)}_broker_cpu_us_per_event`, p.broker], [`${slug(p.label)}_postgres_cpu_us_per_event`, p.postgres], [`${slug(p.label)}_events_per_s`, p.events / p.seconds]])));
process.exit(0);
