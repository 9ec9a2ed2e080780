import { isProjectedModule, type ObjectPath } from '@hub/modules';
import type { Pool, PoolClient } from './pool.ts';
import { applyBatches } from './read-model-apply.ts';
import { type BatchOutcome, type Json, type ObjectsChanged, type PartitionBatch, type ProjectedRecord, type ReadModel } from './read-model-records.ts';
import { forEachLiveObjectChunk, restoreObjects, type LiveObjectsChunk, type RestoredObject } from './read-model-restore.ts';
import { readModelGenerations } from './read-model-generations.ts';
import { readModelLists, type ListOptions } from './read-model-list.ts';
import { readModelLookups } from './read-model-lookups.ts';
import type { ListNarrowing } from './read-model-visibility.ts';
import { redriveRecord } from './read-model-redrive.ts';

export type { ListOptions } from './read-model-list.ts';
export { creationTime, projectedRecord, type BatchOutcome, type ObjectChange, type ObjectsChanged, type PartitionBatch, type ProjectedRecord, type ReadModel } from './read-model-records.ts';
export type { LiveObjectsChunk, RestoredObject } from './read-model-restore.ts';

// Read models of locations and tariffs in Postgres (reference design, Postgres). The projector applies
// a batch of one partition in one transaction together with that partition's offset, so the rows and
// the position always agree: replaying a topic into an empty schema gives exactly the same rows.

export interface PageQuery extends ListNarrowing {
  readonly offset: number;
  readonly limit: number;
  readonly dateFrom?: Date;
  readonly dateTo?: Date;
}

/** A page of documents as JSON text, so the ingress answers without parsing and re-serialising. */
export interface DocumentPage {
  readonly documentsJson: string[];
  readonly total: number;
}

async function generationOf(client: PoolClient | Pool, model: ReadModel): Promise<number> {
  const { rows } = await client.query<{ active: number }>('select active from read_model_generations where model = $1', [model]);
  return rows[0]?.active ?? 1;
}

/** An event of a read model's topic that the read model did not apply (projection_rejects). */
export interface ProjectionReject {
  readonly partition: number;
  readonly offset: string;
  readonly subject: string;
  readonly type: string;
  readonly reason: string;
  readonly at: Date;
}

export interface ReadModelStore {
  /**
   * Applies one partition's records in order, exactly once: records before the stored position are
   * skipped, the rest change the rows and move the position, all in one transaction. `generation`
   * defaults to the active one (a rebuild names the one it builds).
   */
  applyBatch(model: ReadModel, partition: number, records: readonly ProjectedRecord[], generation?: number): Promise<BatchOutcome>;
  /**
   * The batches of several partitions in one transaction, each exactly once as applyBatch does: the
   * projector applies what one fetch brought for all its partitions at once. `onChanged` gets the objects
   * changed, before the commit (snapshot topics, docs/decisions/0014-snapshot-topics.md).
   */
  applyBatches(model: ReadModel, batches: ReadonlyArray<PartitionBatch>, generation?: number, onChanged?: ObjectsChanged): Promise<BatchOutcome[]>;
  /** Stores snapshot records into a generation with the positions they reflect (read-model-restore.ts). */
  restore(model: ReadModel, generation: number, objects: readonly RestoredObject[], positions: ReadonlyMap<number, bigint>): Promise<void>;
  /**
   * The active generation's objects in chunks, each handed to `write` while its rows are share-locked,
   * with the positions they reflect (read-model-restore.ts); resolves to the number written.
   */
  liveObjects(model: ReadModel, chunkSize: number, write: (chunk: LiveObjectsChunk) => Promise<void>): Promise<number>;
  /** The active generation. */
  activeGeneration(model: ReadModel): Promise<number>;
  /**
   * Applies a quarantined record again after a fix (hubctl quarantine redrive), outside the position
   * order: other events of its object may have been applied since. It is applied only when the stored
   * object is not newer (by last_updated; for a delete, by the event's time), else it is superseded.
   * A record the read model still cannot apply throws NotApplicable (a record failure).
   */
  redrive(model: ReadModel, record: ProjectedRecord): Promise<'redriven' | 'superseded'>;
  /**
   * The newest events of the active generation the read model did not apply: not applicable, or
   * superseded by a newer state of their object (reason "superseded: ...", newest wins).
   */
  rejects(model: ReadModel, limit: number): Promise<ProjectionReject[]>;
  /** The next offset to apply, per partition, of the active generation. */
  positions(model: ReadModel, generation?: number): Promise<Map<number, bigint>>;
  /** Routed list for an eMSP platform: only CPOs with an active routing rule to one of its eMSP parties. */
  listVisible(model: ReadModel, platformId: string, page: PageQuery): Promise<DocumentPage>;
  /** One object whoever may see it: what the hub itself reads to write a record in another version (a 2.1.1 Session's Location). */
  findObject(model: ReadModel, path: ObjectPath): Promise<Json | undefined>;
  /** One object, when the platform may see it (owning CPO, or a routed eMSP); undefined otherwise. */
  findVisible(model: ReadModel, platformId: string, path: ObjectPath): Promise<Json | undefined>;
  /** CPOs that own a location with this id and have an active route (ACTIVE_ROUTES) to the eMSP party. */
  locationOwners(locationId: string, emsp: { countryCode: string; partyId: string }): Promise<Array<{ countryCode: string; partyId: string }>>;
  /**
   * eMSPs that own a token with this object id ("uid|TYPE", @hub/modules tokenObjectId) and have an
   * active route (ACTIVE_ROUTES) to the CPO: where a CPO's real-time authorization goes.
   */
  tokenOwners(tokenId: string, cpo: { countryCode: string; partyId: string }): Promise<Array<{ countryCode: string; partyId: string }>>;
  /**
   * Tokens whose contract_id is this one (a CiString: any case), of the eMSPs with an active route to
   * the CPO, ordered by eMSP: who a 2.1.1 CPO's auth_id names (docs/reference/version-mapping.md).
   */
  tokensByContractId(contractId: string, cpo: { countryCode: string; partyId: string }): Promise<Json[]>;
  /** Whether the object at the path exists at all (for PATCH and child PUT pre-checks). */
  exists(model: ReadModel, path: ObjectPath): Promise<boolean>;
  /** Starts a rebuild: a new, empty generation next to the active one. */
  beginRebuild(model: ReadModel): Promise<{ active: number; building: number }>;
  /**
   * Makes the building generation active when it has applied at least everything the active one has;
   * false (nothing changed) when it is still behind. Old generations' rows are dropped.
   */
  switchOver(model: ReadModel, building: number, options?: { force?: boolean }): Promise<boolean>;
  counts(model: ReadModel, generation: number): Promise<number>;
  /**
   * Refreshes the planner's statistics of a read-model table. A rebuild fills a generation the
   * statistics have never seen; without this the planner takes it for empty and looks up a batch's
   * keys by scanning the whole new generation (seconds per batch once it holds tens of thousands).
   */
  analyze(model: ReadModel): Promise<void>;
  /**
   * Drops the rows of generations older than the active one (after a switch-over; outside its lock so
   * the projector is not held up), then VACUUM ANALYZE so pages are index-only scans again.
   */
  maintain(model: ReadModel): Promise<void>;
}

/** `lists`: how list pages find their start (read-model-list.ts); the defaults are what the ingress runs. */
export function postgresReadModelStore(pool: Pool, lists: ListOptions = {}): ReadModelStore {
  return {
    async applyBatch(model, partition, records, generation) {
      const [outcome] = await applyBatches(pool, model, [{ partition, records }], generation);
      return outcome ?? { applied: 0, skipped: records.length, rejected: 0, superseded: 0, quarantined: 0 };
    },

    applyBatches(model, batches, generation, onChanged) {
      return applyBatches(pool, model, batches, generation, onChanged);
    },

    restore: (model, generation, objects, positions) => restoreObjects(pool, model, generation, objects, positions),
    liveObjects: (model, chunkSize, write) => forEachLiveObjectChunk(pool, model, chunkSize, write),
    activeGeneration: (model) => generationOf(pool, model),

    async rejects(model, limit) {
      const { rows } = await pool.query<{ partition: number; offset: string; subject: string; event_type: string; reason: string; at: Date }>(
        `select partition, "offset", subject, event_type, reason, at from projection_rejects
          where model = $1 and generation = (select coalesce((select active from read_model_generations where model = $1), 1))
          order by at desc, partition, "offset" desc limit $2`,
        [model, limit],
      );
      return rows.map((r) => ({ partition: r.partition, offset: r.offset, subject: r.subject, type: r.event_type, reason: r.reason, at: r.at }));
    },

    redrive(model, record) {
      if (!isProjectedModule(model)) throw new Error(`unknown read model ${String(model)}`);
      return redriveRecord(pool, model, record);
    },

    async positions(model, generation) {
      const gen = generation ?? (await generationOf(pool, model));
      const { rows } = await pool.query<{ partition: number; next_offset: string }>(
        'select partition, next_offset from projection_offsets where model = $1 and generation = $2',
        [model, gen],
      );
      return new Map(rows.map((r) => [r.partition, BigInt(r.next_offset)]));
    },

    listVisible: readModelLists(pool, lists),

    ...readModelLookups(pool),
    ...readModelGenerations(pool),
  };
}
