import { isProjectedModule, projectionOf, type ObjectPath } from '@hub/modules';
import { inTransaction, type Pool, type PoolClient } from './pool.ts';
import { ACTIVE_ROUTES } from './postgres-routing-directory.ts';
import { applyBatches } from './read-model-apply.ts';
import { type BatchOutcome, type Json, type ObjectsChanged, type PartitionBatch, type ProjectedRecord, type ReadModel } from './read-model-records.ts';
import { forEachLiveObjectChunk, restoreObjects, type LiveObjectsChunk, type RestoredObject } from './read-model-restore.ts';
import { readModelLists, type ListOptions } from './read-model-list.ts';
import { sides, type ListNarrowing } from './read-model-visibility.ts';
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

    async findObject(model, path) {
      const { table } = projectionOf(model);
      const { rows } = await pool.query<{ document: Json }>(
        `select t.document from ${table} t
          where t.generation = (select active from read_model_generations where model = $1)
            and t.country_code = $2 and t.party_id = $3 and t.id = $4`,
        [model, path.countryCode, path.partyId, path.id.toUpperCase()],
      );
      const document = rows[0]?.document;
      return document ? projectionOf(model).find(document, path) : undefined;
    },

    async findVisible(model, platformId, path) {
      const { table } = projectionOf(model);
      const { owner, reader } = sides(model);
      const { rows } = await pool.query<{ document: Json }>(
        `select t.document from ${table} t
          where t.generation = (select active from read_model_generations where model = $2)
            and t.country_code = $3 and t.party_id = $4 and t.id = $5
            and (
              exists (select 1 from parties o where o.platform_id = $1 and o.role = '${owner.toUpperCase()}' and o.country_code = t.country_code and o.party_id = t.party_id)
              or exists (
                select 1 from (${ACTIVE_ROUTES}) a
                 where a.${reader}_platform_id = $1 and a.${owner}_country_code = t.country_code and a.${owner}_party_id = t.party_id))`,
        [platformId, model, path.countryCode, path.partyId, path.id.toUpperCase()],
      );
      const document = rows[0]?.document;
      if (!document) return undefined;
      return projectionOf(model).find(document, path);
    },

    async locationOwners(locationId, emsp) {
      const { rows } = await pool.query<{ country_code: string; party_id: string }>(
        `select l.country_code, l.party_id from locations l
          join (${ACTIVE_ROUTES}) a on a.cpo_country_code = l.country_code and a.cpo_party_id = l.party_id
                                   and a.emsp_country_code = $2 and a.emsp_party_id = $3
          where l.generation = (select active from read_model_generations where model = 'locations') and l.id = $1`,
        [locationId.toUpperCase(), emsp.countryCode, emsp.partyId],
      );
      return rows.map((r) => ({ countryCode: r.country_code, partyId: r.party_id }));
    },

    async tokensByContractId(contractId, cpo) {
      const { rows } = await pool.query<{ document: Json }>(
        `select t.document from (${ACTIVE_ROUTES}) a
          join tokens t on t.country_code = a.emsp_country_code and t.party_id = a.emsp_party_id
                       and t.generation = (select active from read_model_generations where model = 'tokens')
                       and upper(t.document->>'contract_id') = upper($1)
          where a.cpo_country_code = $2 and a.cpo_party_id = $3
          order by t.country_code, t.party_id, t.id`,
        [contractId, cpo.countryCode, cpo.partyId],
      );
      return rows.map((r) => r.document);
    },

    async tokenOwners(tokenId, cpo) {
      // The CPO's routed eMSPs first (routing_rules_cpo), then each one's token by primary key.
      const { rows } = await pool.query<{ country_code: string; party_id: string }>(
        `select t.country_code, t.party_id from (${ACTIVE_ROUTES}) a
          join tokens t on t.country_code = a.emsp_country_code and t.party_id = a.emsp_party_id
                       and t.generation = (select active from read_model_generations where model = 'tokens') and t.id = $1
          where a.cpo_country_code = $2 and a.cpo_party_id = $3
          order by t.country_code, t.party_id`,
        [tokenId.toUpperCase(), cpo.countryCode, cpo.partyId],
      );
      return rows.map((r) => ({ countryCode: r.country_code, partyId: r.party_id }));
    },

    beginRebuild(model) {
      return inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ active: number }>('select active from read_model_generations where model = $1 for update', [model]);
        const active = rows[0]?.active ?? 1;
        const building = active + 1;
        // Leftovers of an aborted rebuild of the same generation start from scratch.
        await client.query(`delete from ${projectionOf(model).table} where generation = $1`, [building]);
        await client.query('delete from projection_offsets where model = $1 and generation = $2', [model, building]);
        await client.query('delete from projection_rejects where model = $1 and generation = $2', [model, building]);
        await client.query('update read_model_generations set building = $2 where model = $1', [model, building]);
        return { active, building };
      });
    },

    switchOver(model, building, options = {}) {
      return inTransaction(pool, async (client) => {
        // Exclusive: waits for the projector's batches in flight, holds off new ones until commit.
        const { rows } = await client.query<{ active: number }>('select active from read_model_generations where model = $1 for update', [model]);
        const active = rows[0]?.active ?? 1;
        const positions = async (gen: number) =>
          new Map(
            (
              await client.query<{ partition: number; next_offset: string }>(
                'select partition, next_offset from projection_offsets where model = $1 and generation = $2',
                [model, gen],
              )
            ).rows.map((r) => [r.partition, BigInt(r.next_offset)]),
          );
        const live = await positions(active);
        const rebuilt = await positions(building);
        // Forced (hubctl positions reset): the live positions belong to another topic and say nothing.
        if (!options.force && ![...live].every(([p, offset]) => (rebuilt.get(p) ?? 0n) >= offset)) return false;
        await client.query('update read_model_generations set active = $2, building = null where model = $1', [model, building]);
        await client.query('delete from projection_offsets where model = $1 and generation < $2', [model, building]);
        return true;
      });
    },

    async maintain(model) {
      await pool.query(`delete from ${projectionOf(model).table} where generation < (select active from read_model_generations where model = $1)`, [model]);
      await pool.query(`vacuum (analyze) ${projectionOf(model).table}`);
    },

    async analyze(model) {
      await pool.query(`analyze ${projectionOf(model).table}`);
    },

    async counts(model, generation) {
      const { rows } = await pool.query<{ n: string }>(`select count(*) as n from ${projectionOf(model).table} where generation = $1`, [generation]);
      return Number(rows[0]?.n ?? 0);
    },

    async exists(model, path) {
      // A location (or tariff) needs only its key, so its document is not read; an EVSE or connector
      // is looked up in the location document, as a detail GET finds it.
      const needsDocument = path.evseUid !== undefined;
      const { rows } = await pool.query<{ document: Json | null }>(
        `select ${needsDocument ? 'document' : 'null as document'} from ${projectionOf(model).table}
          where generation = (select active from read_model_generations where model = $1) and country_code = $2 and party_id = $3 and id = $4`,
        [model, path.countryCode, path.partyId, path.id.toUpperCase()],
      );
      const row = rows[0];
      if (!row) return false;
      return !needsDocument || (row.document !== null && projectionOf(model).find(row.document, path) !== undefined);
    },
  };
}
