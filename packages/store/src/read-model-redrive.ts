import { parseSubject, projectionOf } from '@hub/modules';
import { inTransaction, pgPool } from './pg-pool.ts';
import type { Database } from './pool.ts';
import { utcTime, type ProjectedRecord, type ReadModel } from '@hub/core';

// Re-drive of a quarantined projector record (hubctl quarantine redrive, migration 013): the record
// is applied after events of its object that came later, so it must not make the object older.

type Json = Record<string, unknown>;

/** A re-driven record the read model cannot apply (a PATCH of an unknown object, an unreadable subject). */
export class NotApplicable extends Error {
  readonly code = '22000';
  constructor(reason: string) {
    super(`not applicable to the read model: ${reason}`);
    this.name = 'NotApplicable';
  }
}

/**
 * Applies one quarantined record to the active generation outside the position order (see
 * ReadModelStore.redrive): only when the stored object is not newer, else 'superseded'.
 */
export async function redriveRecord(db: Database, model: ReadModel, record: ProjectedRecord): Promise<'redriven' | 'superseded'> {
  const pool = pgPool(db);
  const projection = projectionOf(model);
  const table = projection.table;
  const path = parseSubject(record.subject);
  if (!path) throw new NotApplicable(`unreadable subject ${record.subject}`);
  const key = [path.countryCode, path.partyId, path.id.toUpperCase()];
  return inTransaction(pool, async (client) => {
    const gen = (await client.query<{ active: number }>('select active from read_model_generations where model = $1 for share', [model])).rows[0]?.active ?? 1;
    const stored = (await client.query<{ document: Json; last_updated: Date }>(`select document, last_updated from ${table} where generation = $1 and country_code = $2 and party_id = $3 and id = $4 for update`, [gen, ...key])).rows[0];
    const result = projection.evolve(stored?.document, record.type, path, record.data);
    if (result.kind === 'rejected') throw new NotApplicable(result.reason);
    // Older than the object (or the EVSE or Connector of it) held: newest wins.
    if (result.kind === 'superseded') return 'superseded';
    const newer = (time: unknown) => stored !== undefined && typeof time === 'string' && stored.last_updated.getTime() > Date.parse(time);
    if (result.kind === 'deleted') {
      if (newer(record.time)) return 'superseded';
      await client.query(`delete from ${table} where generation = $1 and country_code = $2 and party_id = $3 and id = $4`, [gen, ...key]);
      return 'redriven';
    }
    if (newer(result.document['last_updated'])) return 'superseded';
    await client.query(
      `insert into ${table} (generation, country_code, party_id, id, last_updated, created_at, document)
       values ($1, $2, $3, $4, $5::timestamptz, coalesce(nullif($6, '')::timestamptz, $5::timestamptz), $7::json)
       on conflict (generation, country_code, party_id, id) do update set last_updated = excluded.last_updated, document = excluded.document`,
      [gen, ...key, result.document['last_updated'], utcTime(record.time, 'refuse') ?? '', JSON.stringify(result.document)],
    );
    return 'redriven';
  });
}

