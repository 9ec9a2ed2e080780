import type { EventLog, ObjectChange, ReadModel, ReadModelStore, RecordBatch, RestoredObject } from '@hub/core';
import { CHANGE_POSITION_HEADER, newEvent, recordValueLength, topics, type HubEvent } from '@hub/events';
import { objectKey, parseSubject, pathSubject, personalDataOf, projectionOf, topicOf } from '@hub/modules';
import { ERASED_PLACEHOLDER } from '@hub/registry';

// The snapshot topics (docs/decisions/0014-snapshot-topics.md): one compacted record per live object
// of a read model, appended by the projector before each batch commits; a rebuild (hubctl readmodel
// rebuild) and a fresh projector load them and replay only the change topic's tail after them.

export function snapshotTopicOf(model: ReadModel): string {
  return topics[projectionOf(model).snapshot.topic];
}

/**
 * The snapshot records of what a batch changed, keyed as the change topic is (the tokens' keys are
 * made pseudonymous when the driver-data log seals them, as the token events' are). A removed object
 * is a tombstone: null value, so compaction drops the key.
 */
export function snapshotRecords(model: ReadModel, changes: readonly ObjectChange[], source: string): HubEvent[] {
  return changes.map((c) =>
    newEvent<unknown>({
      type: projectionOf(model).snapshot.type,
      source,
      subject: pathSubject(c.path),
      key: objectKey(c.path),
      data: c.document,
      // The object's creation time in the read model: what its lists are ordered by.
      ...(c.createdAt ? { time: c.createdAt } : {}),
      changePosition: `${c.partition}:${c.nextOffset.toString()}`,
    }),
  );
}

/**
 * Appends the snapshot records of a batch in chunks of at most about 768 KiB, one after the other: one
 * append travels as one record batch per partition, and a catch-up round changes thousands of whole
 * objects, far beyond what a broker takes in one batch (message.max.bytes, 1 MiB by default).
 */
export async function appendSnapshot(eventLog: Pick<EventLog, 'append'>, model: ReadModel, changes: readonly ObjectChange[], source: string): Promise<void> {
  await appendInChunks(eventLog, snapshotTopicOf(model), snapshotRecords(model, changes, source));
}

async function appendInChunks(eventLog: Pick<EventLog, 'append'>, topic: string, events: readonly HubEvent[]): Promise<void> {
  const limit = 768 * 1024;
  let chunk: HubEvent[] = [];
  let bytes = 0;
  for (const event of events) {
    // The document's JSON plus the CloudEvents headers and the key.
    const size = recordValueLength(event) + 512;
    if (chunk.length > 0 && bytes + size > limit) {
      await eventLog.append(topic, chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(event);
    bytes += size;
  }
  if (chunk.length > 0) await eventLog.append(topic, chunk);
}

export interface SnapshotLoad {
  /** Snapshot records read (live objects, plus superseded versions and tombstones not yet compacted). */
  readonly records: number;
  /** Next offset per change-topic partition that the loaded states reflect. */
  readonly positions: ReadonlyMap<number, bigint>;
  readonly seconds: number;
}

/** The snapshot reflects change-topic records that retention has already deleted: the tail has a gap. */
export class SnapshotBehindChangeTopicError extends Error {
  constructor(model: ReadModel, gaps: string) {
    super(`the ${model} snapshot is behind the start of ${topicOf(model)} (${gaps}): records in between are gone; the read model cannot be rebuilt from them`);
    this.name = 'SnapshotBehindChangeTopicError';
  }
}

/** The snapshot topic's partitions do not match its change topic's: a record's partition says nothing. */
export class SnapshotPartitionsError extends Error {
  constructor(model: ReadModel, snapshot: number, change: number) {
    super(`the ${model} snapshot topic has ${snapshot} partitions and ${topicOf(model)} ${change}: a snapshot record's partition must be its change records' partition`);
    this.name = 'SnapshotPartitionsError';
  }
}

/**
 * The change-topic position a snapshot record in `partition` reflects. The header is
 * "<partition>:<offset>" (the projector's: its change record's partition, which is the record's own)
 * or "<partition>:<offset>,..." over every partition (hubctl readmodel snapshot, which writes before
 * Kafka has chosen the partition): the entry of the record's own partition applies.
 */
export function changePositionIn(value: string | undefined, partition: number): bigint | undefined {
  if (value === undefined) return undefined;
  for (const entry of value.split(',')) {
    const m = /^(\d+):(\d+)$/.exec(entry.trim());
    if (m && Number(m[1]) === partition) return BigInt(m[2]!);
  }
  return undefined;
}

function header(headers: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const v: unknown = headers[name];
  const first: unknown = Array.isArray(v) ? v[0] : v;
  return Buffer.isBuffer(first) || typeof first === 'string' ? first.toString() : undefined;
}

/** A topic just created may have no leader yet for a moment (NOT_LEADER): asked again for up to 15 s. */
async function rangesOf(eventLog: EventLog, topic: string): Promise<Map<number, { low: bigint; high: bigint }>> {
  const giveUpAt = Date.now() + 15_000;
  for (;;) {
    try {
      return await eventLog.offsetRanges(topic);
    } catch (e) {
      if (Date.now() >= giveUpAt) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * Loads the snapshot topic, as it stands when the load starts, into a generation of the read model
 * and moves its positions to the change-topic offsets the snapshot reflects; then checks that the
 * change topic still holds every record after them. `eventLog` must be the driver-data log, so token
 * records are opened.
 */
export async function loadSnapshot(
  deps: { eventLog: EventLog; store: Pick<ReadModelStore, 'restore'> },
  model: ReadModel,
  generation: number,
  options: { fetchBytesPerPartition?: number; onProgress?: (records: number, target: bigint) => void } = {},
): Promise<SnapshotLoad> {
  const started = Date.now();
  const topic = snapshotTopicOf(model);
  const ranges = await rangesOf(deps.eventLog, topic);
  const changeRanges = await rangesOf(deps.eventLog, topicOf(model));
  // A record's partition stands for its change records' partition only while both topics have as many.
  if (ranges.size !== changeRanges.size) throw new SnapshotPartitionsError(model, ranges.size, changeRanges.size);
  const target = new Map([...ranges].filter(([, r]) => r.high > r.low).map(([p, r]) => [p, r.high]));
  const targetTotal = [...ranges.values()].reduce((n, r) => n + (r.high - r.low), 0n);
  const positions = new Map<number, bigint>();
  let records = 0;
  if (target.size > 0) {
    const reached = new Map<number, bigint>();
    const state: { failure?: Error } = {};
    const subscription = await deps.eventLog.subscribe({
      group: `snapshot-${model}-g${generation}-${Date.now()}`,
      topics: [topic],
      ephemeral: true,
      concurrency: 4,
      maxBytesPerPartition: options.fetchBytesPerPartition ?? 1024 * 1024,
      onBatch: async (batch) => {
        const { objects, batchPositions } = restoredObjectsOf(batch, target.get(batch.partition) ?? 0n);
        try {
          await deps.store.restore(model, generation, objects, batchPositions);
        } catch (e) {
          state.failure ??= e instanceof Error ? e : new Error(String(e));
          throw e;
        }
        for (const [p, n] of batchPositions) if (n > (positions.get(p) ?? 0n)) positions.set(p, n);
        records += objects.length;
        reached.set(batch.partition, BigInt(batch.lastOffset) + 1n);
      },
    });
    try {
      for (;;) {
        if (state.failure) throw state.failure;
        options.onProgress?.(records, targetTotal);
        if ([...target].every(([p, high]) => (reached.get(p) ?? 0n) >= high)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await subscription.stop();
    }
  }
  // The tail must start where the change topic still holds records: else what changed in between is lost.
  const change = await rangesOf(deps.eventLog, topicOf(model));
  const gaps = [...change].filter(([p, r]) => r.low > (positions.get(p) ?? 0n)).map(([p, r]) => `partition ${p}: snapshot at ${positions.get(p) ?? 0n}, topic starts at ${r.low}`);
  if (gaps.length > 0) throw new SnapshotBehindChangeTopicError(model, gaps.join('; '));
  return { records, positions, seconds: (Date.now() - started) / 1000 };
}

/**
 * The batch's snapshot records before `end` (where the load's target stands) as the objects to
 * restore, and the change-topic position they reflect.
 */
function restoredObjectsOf(batch: RecordBatch, end: bigint): { objects: RestoredObject[]; batchPositions: Map<number, bigint> } {
  const objects: RestoredObject[] = [];
  const batchPositions = new Map<number, bigint>();
  for (const record of batch.records) {
    if (BigInt(record.offset) >= end) break;
    const event = record.event;
    const subject = event?.subject ?? header(record.headers, 'ce_subject');
    const path = subject === undefined ? undefined : parseSubject(subject);
    const next = changePositionIn(event?.changePosition ?? header(record.headers, CHANGE_POSITION_HEADER), batch.partition);
    if (!path || next === undefined) continue;
    const document = record.value === null ? null : event && typeof event.data === 'object' && event.data !== null ? (event.data as Record<string, unknown>) : undefined;
    if (document === undefined) continue;
    objects.push({ path: { countryCode: path.countryCode, partyId: path.partyId, id: path.id }, document, createdAt: event?.time ?? new Date(0).toISOString() });
    // A snapshot record is in the partition of its change records (the same key and partition count).
    if (next > (batchPositions.get(batch.partition) ?? 0n)) batchPositions.set(batch.partition, next);
  }
  return { objects, batchPositions };
}

export interface SnapshotFill {
  readonly objects: number;
  /** Tokens whose personal data was erased before (their rows hold none, and no data key to seal under). */
  readonly skipped: number;
  readonly seconds: number;
}

/**
 * Writes every live object of a read model to its snapshot topic (hubctl readmodel snapshot): for a
 * deployment whose read model predates the snapshot topics, before its change topics get a finite
 * retention (docs/decisions/0014-snapshot-topics.md). Safe while projectors run: each chunk is written
 * while its rows are share-locked (ReadModelStore.liveObjects), so a projector's later record of the
 * same object comes after it. The header names every partition's position, since the partition is
 * Kafka's choice by key. `eventLog` must be the driver-data log, so tokens are sealed.
 */
export async function fillSnapshot(
  deps: { eventLog: Pick<EventLog, 'append'>; store: Pick<ReadModelStore, 'liveObjects'> },
  model: ReadModel,
  options: { chunkSize?: number; source?: string; onProgress?: (objects: number) => void } = {},
): Promise<SnapshotFill> {
  const started = Date.now();
  const objectsAreDriverTokens = personalDataOf(model)?.driverToken === 'subject';
  let skipped = 0;
  let appended = 0;
  await deps.store.liveObjects(model, options.chunkSize ?? 500, async (chunk) => {
    const position = [...chunk.positions].sort(([a], [b]) => a - b).map(([p, next]) => `${p}:${next.toString()}`).join(',');
    // An erased token's row is named by its data key's id and holds no personal field: sealing it
    // would ask for a key of a uid that is not one. It stays out (ADR 0014, Consequences). Such rows
    // are a model's whose objects are drivers' Tokens (personalData by 'subject'), erased when the
    // Token's uid (mod_tokens.asciidoc, Token object) reads the placeholder.
    const objects = chunk.objects.filter((o) => !(objectsAreDriverTokens && o.document['uid'] === ERASED_PLACEHOLDER));
    skipped += chunk.objects.length - objects.length;
    const events = objects.map((o) =>
      newEvent<unknown>({ type: projectionOf(model).snapshot.type, source: options.source ?? 'hubctl', subject: pathSubject(o.path), key: objectKey(o.path), data: o.document, time: o.createdAt, changePosition: position }),
    );
    await appendInChunks(deps.eventLog, snapshotTopicOf(model), events);
    appended += objects.length;
    options.onProgress?.(appended);
  });
  return { objects: appended, skipped, seconds: (Date.now() - started) / 1000 };
}
