// Rebuild cost against history (docs/decisions/0014-snapshot-topics.md): N locations, each changed
// CHANGES times after its PUT, are projected by a real projector process (which writes the snapshot
// topic); the snapshot topic is then compacted (its segments rolled, the log cleaner let run) and the
// locations read model is rebuilt twice, side by side: from the snapshot plus the change topic's tail
// (hubctl readmodel rebuild) and from the change topic's whole history (--from history). Prints both
// times, objects/s, and the on-disk size of the snapshot and change topics.
// Run: npm run bench -- history [locations=50000] [changes=5]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { locationEventTypes, newEvent, topics, type HubEvent } from '@hub/events';
import { objectKey, pathSubject } from '@hub/modules';
import { rebuildReadModel } from '@hub/hubctl';
import { createPool, dropDatabase, ensureDatabase, migrate, postgresReadModelStore } from '@hub/store';
import { createTestStack, repoRoot } from '@hub/testing';
import { printFigures, type Figure } from './figures.ts';
import { startNode } from './load.ts';

const count = Number(process.argv[2] ?? 50_000);
const changes = Number(process.argv[3] ?? 5);
const out = (line: string) => process.stdout.write(`${line}\n`);
const stack = await createTestStack('bench_history');
const store = postgresReadModelStore(stack.pool);
const template = JSON.parse(readFileSync(join(repoRoot, '..', 'shared', 'ocpi-2.2.1', 'examples', 'location_example.json'), 'utf8')) as Record<string, unknown>;
const figures: Record<string, Figure> = { locations: count, changes_per_location: changes };

/** Bytes of a topic's log segments on disk (the bench's broker keeps them under .local). */
function topicBytes(topic: string): number {
  const physical = stack.eventLog.physical(topic);
  let bytes = 0;
  const walk = (dir: string, depth: number): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (!entry.isDirectory()) continue;
      if (new RegExp(`^${physical.replace(/[.]/g, '\\.')}-\\d+$`).test(entry.name)) {
        // Record data only: index files are preallocated (10 MiB each) and say nothing of the records.
        for (const f of readdirSync(path)) if (f.endsWith('.log')) bytes += statSync(join(path, f)).size;
      } else if (depth < 6) walk(path, depth + 1);
    }
  };
  walk(join(repoRoot, '.local'), 0);
  return bytes;
}
const mib = (bytes: number) => bytes / 1048576;

/** Appends in batches of 1,000, four in flight. */
async function appendAll(make: (n: number) => HubEvent): Promise<void> {
  const batch = 1000;
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < count; i += batch) {
    const events = Array.from({ length: Math.min(batch, count - i) }, (_, j) => make(i + j));
    const p = stack.eventLog.append(topics.locations, events);
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    if (inFlight.size >= 4) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
}

const pathOf = (n: number) => ({ countryCode: 'NL', partyId: 'BEN', id: `LOC-${String(n).padStart(7, '0')}` });
const stamp = (n: number, round: number) => new Date(Date.UTC(2024, 0, 1) + round * 86_400_000 + n * 1000).toISOString();

try {
  const t0 = Date.now();
  await appendAll((n) => {
    const path = pathOf(n);
    return newEvent({ type: locationEventTypes.locationPut, source: 'bench', subject: pathSubject(path), key: objectKey(path), data: { ...template, country_code: 'NL', party_id: 'BEN', id: path.id, last_updated: stamp(n, 0) } });
  });
  for (let round = 1; round <= changes; round++) {
    await appendAll((n) => {
      const path = pathOf(n);
      return newEvent({ type: locationEventTypes.locationPatched, source: 'bench', subject: pathSubject(path), key: objectKey(path), data: { name: `change ${round}`, last_updated: stamp(n, round) } });
    });
  }
  const total = count * (1 + changes);
  out(`appended ${total} location events (${count} PUTs, ${changes} PATCHes each) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  // The live projection, which writes the snapshot topic as it goes.
  const projector = await startNode(join(repoRoot, 'services', 'projector', 'src', 'main.ts'), [], stack.env({ LOG_LEVEL: 'info' }), /projector running/);
  const t1 = Date.now();
  for (;;) {
    const done = [...(await store.positions('locations')).values()].reduce((a, b) => a + b, 0n);
    if (done >= BigInt(total)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const projectSeconds = (Date.now() - t1) / 1000;
  figures['projection_events_per_s'] = total / projectSeconds;
  out(`projector applied ${total} events and wrote the snapshot in ${projectSeconds.toFixed(1)} s (${(total / projectSeconds).toFixed(0)} events/s)`);
  await new Promise<void>((resolve) => {
    projector.child.once('exit', () => resolve());
    projector.child.kill('SIGTERM');
  });

  // What the snapshot writes cost the projection: the same events projected into another database by
  // a projector that writes no snapshot (PROJECTOR_START_FROM=history).
  const plainUrl = new URL(stack.databaseUrl);
  plainUrl.pathname = `${plainUrl.pathname}_nosnap`;
  await ensureDatabase(plainUrl.toString());
  const plainPool = createPool(plainUrl.toString(), { max: 2, application: 'bench-history', onIdleError: () => undefined });
  try {
    await migrate(plainPool, join(repoRoot, 'infra', 'migrations'));
    const plain = await startNode(join(repoRoot, 'services', 'projector', 'src', 'main.ts'), [], stack.env({ LOG_LEVEL: 'info', DATABASE_URL: plainUrl.toString(), PROJECTOR_GROUP_ID: 'projector-nosnap', PROJECTOR_START_FROM: 'history' }), /projector running/);
    const t = Date.now();
    for (;;) {
      const done = [...(await postgresReadModelStore(plainPool).positions('locations')).values()].reduce((a, b) => a + b, 0n);
      if (done >= BigInt(total)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const seconds = (Date.now() - t) / 1000;
    figures['projection_without_snapshot_events_per_s'] = total / seconds;
    out(`the same events projected without writing the snapshot: ${seconds.toFixed(1)} s (${(total / seconds).toFixed(0)} events/s)`);
    await new Promise<void>((resolve) => {
      plain.child.once('exit', () => resolve());
      plain.child.kill('SIGTERM');
    });
  } finally {
    await plainPool.end();
    await dropDatabase(plainUrl.toString()).catch(() => undefined);
  }

  // Compaction as the broker does it in production, made to happen now: roll the active segments
  // (segment.ms, then one more record per partition: tombstones of a location that never existed)
  // and let the cleaner run until the topic's size settles.
  const snapshotTopic = stack.eventLog.physical(topics.locationsSnapshot);
  const admin = stack.eventLog.topicAdmin();
  const uncompacted = topicBytes(topics.locationsSnapshot);
  // AlterConfigs replaces the topic's whole configuration: cleanup.policy is given again.
  await admin.replaceTopicConfig(snapshotTopic, { 'cleanup.policy': 'compact', 'segment.ms': '1000', 'min.cleanable.dirty.ratio': '0.01', 'min.compaction.lag.ms': '0' });
  await new Promise((r) => setTimeout(r, 1500));
  await stack.eventLog.append(
    topics.locationsSnapshot,
    Array.from({ length: 60 }, (_, i) => {
      const path = { countryCode: 'NL', partyId: 'BEN', id: `ROLL-${i}` };
      return newEvent<unknown>({ type: 'ocpi.locations-snapshot.location.v1', source: 'bench', subject: pathSubject(path), key: objectKey(path), data: null, changePosition: '0:0' });
    }),
  );
  // The cleaner looks for work every 15 s (log.cleaner.backoff.ms): wait until it has shrunk the
  // topic and the size has settled for 10 s, at most 3 minutes.
  const t2 = Date.now();
  let size = topicBytes(topics.locationsSnapshot);
  let stableSince = Date.now();
  while (Date.now() - t2 < 180_000 && (size > uncompacted * 0.9 || Date.now() - stableSince < 10_000)) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = topicBytes(topics.locationsSnapshot);
    if (now !== size) stableSince = Date.now();
    size = now;
  }
  out(`the log cleaner compacted the snapshot topic in ${((Date.now() - t2) / 1000).toFixed(0)} s`);
  await admin.close();
  const snapshotRecords = [...(await stack.eventLog.offsetRanges(topics.locationsSnapshot)).values()].reduce((n, r) => n + (r.high - r.low), 0n);
  Object.assign(figures, { snapshot_uncompacted_mib: mib(uncompacted), snapshot_compacted_mib: mib(size), change_topic_mib: mib(topicBytes(topics.locations)), snapshot_offsets: Number(snapshotRecords) });
  out(`snapshot topic: ${mib(uncompacted).toFixed(1)} MiB as written (${snapshotRecords} records), ${mib(size).toFixed(1)} MiB compacted; change topic ${mib(topicBytes(topics.locations)).toFixed(1)} MiB`);

  // The two rebuilds, side by side.
  for (const from of ['snapshot', 'history'] as const) {
    const started = Date.now();
    const result = await rebuildReadModel({ eventLog: stack.eventLog, store }, 'locations', () => undefined, { from });
    const seconds = (Date.now() - started) / 1000;
    if (result.rows !== count) throw new Error(`the rebuild from ${from} holds ${result.rows} locations, not ${count}`);
    figures[`rebuild_from_${from}_s`] = seconds;
    // Serving the new generation: before the old one's rows are deleted and the table vacuumed.
    figures[`rebuild_from_${from}_serving_s`] = result.seconds;
    figures[`rebuild_from_${from}_objects_per_s`] = count / seconds;
    if (from === 'snapshot') figures['snapshot_records_read'] = result.snapshotRecords;
    out(
      `rebuild from ${from}: ${seconds.toFixed(1)} s for ${count} locations (${(count / seconds).toFixed(0)} objects/s; serving after ${result.seconds.toFixed(1)} s, then the old generation dropped)` +
        (from === 'snapshot' ? `, ${result.snapshotRecords} snapshot records read in ${result.snapshotSeconds.toFixed(1)} s` : `, ${total} events`),
    );
  }
  // The target: 500,000 live locations rebuilt (serving) within 2 minutes. The rebuilt generation serves
  // before the old one's rows are deleted; that deletion's cost follows the old table's dead rows.
  const needed = 500_000 / 120;
  const serving = count / (figures['rebuild_from_snapshot_serving_s'] as number);
  out(`target 500k locations serving within 120 s needs ${needed.toFixed(0)} objects/s; from the snapshot this run served after ${(figures['rebuild_from_snapshot_serving_s'] as number).toFixed(1)} s (${serving.toFixed(0)} objects/s): ${(500_000 / serving).toFixed(0)} s at 500k if it scales linearly`);
} finally {
  await stack.cleanup();
}
printFigures(figures);
