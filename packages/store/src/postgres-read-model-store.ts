import { applyLocationEvent, applyTariffEvent, findInLocation, parseSubject, replacesWholeObject, type ObjectPath } from '@hub/read-models';
import type { HubEvent } from '@hub/events';
import { quarantineInsertSql, quarantineParam, type QuarantineEntry } from './consumer-quarantine.ts';
import { inTransaction, type Pool, type PoolClient } from './pool.ts';
import { redriveRecord } from './read-model-redrive.ts';
import { utcTime } from './utc-time.ts';

// Read models of locations and tariffs in Postgres (reference design, Postgres). The projector applies
// a batch of one partition in one transaction together with that partition's offset, so the rows and
// the position always agree: replaying a topic into an empty schema gives exactly the same rows.

export type ReadModel = 'locations' | 'tariffs';

type Json = Record<string, unknown>;

export interface ProjectedRecord {
  readonly offset: string;
  readonly type: string;
  readonly subject: string;
  readonly data: Json;
  /** The event's time (ce_time): an object created by this record is listed by it. */
  readonly time: string;
  /**
   * Not applied but quarantined (migration 013), in the same transaction as the position that moves
   * past it: a record the read model cannot store, or one that is not an event at all.
   */
  readonly quarantine?: QuarantineEntry;
}

/**
 * The record a consumed event becomes for the read models; a record that is not one of our events
 * becomes an "unreadable" one, which the store keeps as a reject so the position still moves.
 */
export function projectedRecord(offset: string, event: HubEvent | undefined): ProjectedRecord {
  return event
    ? { offset, type: event.type, subject: event.subject, data: event.data as Json, time: event.time }
    : { offset, type: 'unreadable', subject: '', data: {}, time: '' };
}

export interface PartitionBatch {
  readonly partition: number;
  readonly records: readonly ProjectedRecord[];
}

export interface BatchOutcome {
  readonly applied: number;
  /** Records at or below the stored position: already applied (redelivery, rebalance, replay). */
  readonly skipped: number;
  readonly rejected: number;
  readonly quarantined: number;
}

export interface PageQuery {
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

const TABLE: Record<ReadModel, string> = { locations: 'locations', tariffs: 'tariffs' };

async function generationOf(client: PoolClient | Pool, model: ReadModel): Promise<number> {
  const { rows } = await client.query<{ active: number }>('select active from read_model_generations where model = $1', [model]);
  return rows[0]?.active ?? 1;
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
   * projector applies what one fetch brought for all its partitions at once.
   */
  applyBatches(model: ReadModel, batches: ReadonlyArray<PartitionBatch>, generation?: number): Promise<BatchOutcome[]>;
  /**
   * Applies a quarantined record again after a fix (hubctl quarantine redrive), outside the position
   * order: other events of its object may have been applied since. It is applied only when the stored
   * object is not newer (by last_updated; for a delete, by the event's time), else it is superseded.
   * A record the read model still cannot apply throws NotApplicable (a record failure).
   */
  redrive(model: ReadModel, record: ProjectedRecord): Promise<'redriven' | 'superseded'>;
  /** The next offset to apply, per partition, of the active generation. */
  positions(model: ReadModel, generation?: number): Promise<Map<number, bigint>>;
  /** Routed list for an eMSP platform: only CPOs with an active routing rule to one of its eMSP parties. */
  listVisible(model: ReadModel, platformId: string, page: PageQuery): Promise<DocumentPage>;
  /** One object, when the platform may see it (owning CPO, or a routed eMSP); undefined otherwise. */
  findVisible(model: ReadModel, platformId: string, path: ObjectPath): Promise<Json | undefined>;
  /** CPOs that own a location with this id and have an active routing rule to the eMSP party. */
  locationOwners(locationId: string, emsp: { countryCode: string; partyId: string }): Promise<Array<{ countryCode: string; partyId: string }>>;
  /** Whether the object at the path exists at all (for PATCH and child PUT pre-checks). */
  exists(model: ReadModel, path: ObjectPath): Promise<boolean>;
  /** Starts a rebuild: a new, empty generation next to the active one. */
  beginRebuild(model: ReadModel): Promise<{ active: number; building: number }>;
  /**
   * Makes the building generation active when it has applied at least everything the active one has;
   * false (nothing changed) when it is still behind. Old generations' rows are dropped.
   */
  switchOver(model: ReadModel, building: number): Promise<boolean>;
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

/**
 * The creation time an event gives its object, as Postgres reads it; '' (the object then takes its
 * last_updated) for a ce_time that is not an ISO 8601 time with a zone in years 1 to 9999. Another
 * producer's event may carry anything there: it must neither fail the batch (which would stop the
 * projection) nor depend on the projector's local time zone (which would make replays differ).
 */
export function creationTime(time: string): string {
  return utcTime(time, 'refuse') ?? '';
}

/**
 * Applies the batches of several partitions of one read model in one transaction of three round
 * trips: begin with the positions, the rows, then the new positions and commit. The
 * first and last are simple-protocol statement lists, which take no parameters: they carry only the
 * model name and integers, checked before they are inlined.
 */
async function applyBatches(pool: Pool, model: ReadModel, batches: ReadonlyArray<PartitionBatch>, generation: number | undefined): Promise<BatchOutcome[]> {
  const partitions = batches.map((b) => b.partition);
  if (!Object.hasOwn(TABLE, model) || !partitions.every(Number.isInteger) || new Set(partitions).size !== partitions.length || (generation !== undefined && !Number.isInteger(generation))) {
    throw new Error(`bad batch coordinates ${model}/${partitions.join(',')}/${generation}`);
  }
  if (batches.length === 0) return [];
  // Rows are locked in partition order, so two instances sharing partitions during a rebalance
  // cannot deadlock each other.
  const ordered = [...batches].sort((x, y) => x.partition - y.partition);
  const client = await pool.connect();
  try {
    // Each partition's position, created at 0 the first time and locked (the no-op update takes the
    // row lock, which serialises two projector instances that briefly share a partition during a
    // rebalance). Without an explicit generation, the active one is read under a share lock: a
    // switch-over (which takes that row exclusively) waits for batches in flight, and no batch
    // applies to a generation that is no longer active. Commits are synchronous: with an
    // asynchronous one a Postgres crash could lose a position the projector has already moved past
    // in Kafka, and the next batch would then skip the lost events for good.
    const generationSql = generation === undefined ? `coalesce((select active from read_model_generations where model = '${model}' for share), 1)` : String(generation);
    const begun = (await client.query(
      `begin;
       insert into projection_offsets (model, generation, partition, next_offset)
         select '${model}', g.generation, p.partition, 0
           from (select ${generationSql} as generation) g, unnest(array[${ordered.map((b) => b.partition).join(',')}]::int[]) with ordinality as p(partition, n)
          order by p.n
       on conflict (model, generation, partition) do update set next_offset = projection_offsets.next_offset
       returning partition, generation, next_offset`,
    )) as unknown as Array<{ rows: Array<{ partition: number; generation: number; next_offset: string }> }>;
    const positionRows = begun[1]?.rows ?? [];
    const gen = positionRows[0]?.generation ?? generation ?? 1;
    const positionOf = new Map(positionRows.map((r) => [r.partition, BigInt(r.next_offset)]));
    const work = ordered.map((b) => ({ partition: b.partition, records: b.records, fresh: b.records.filter((r) => BigInt(r.offset) >= (positionOf.get(b.partition) ?? 0n)) }));
    const outcomes = new Map<number, BatchOutcome>();
    if (work.every((w) => w.fresh.length === 0)) {
      await client.query('commit');
      return batches.map((b) => ({ applied: 0, skipped: b.records.length, rejected: 0, quarantined: 0 }));
    }

    // Load, in one query, every object whose first event in the batches builds on what is stored (an
    // object a PUT replaces first needs nothing: a rebuild's batches of PUTs load nothing), apply in
    // memory, write back in one query. An object's events are all in one partition (the key decides
    // it), so applying partition after partition keeps every object's order.
    const table = TABLE[model];
    // Ids are CiStrings (types.asciidoc): rows are keyed by the upper-cased id (migration 009), the
    // document keeps the id as the CPO sent it.
    const keyOf = (p: ObjectPath) => `${p.countryCode}\u0000${p.partyId}\u0000${p.id.toUpperCase()}`;
    const seen = new Set<string>();
    const needed: string[][] = [];
    const parsed = work.map((w) => w.fresh.map((r) => parseSubject(r.subject)));
    work.forEach((w, wi) => {
      w.fresh.forEach((record, i) => {
        const path = parsed[wi]?.[i];
        if (!path || record.quarantine) return;
        const key = keyOf(path);
        if (seen.has(key)) return;
        seen.add(key);
        if (!replacesWholeObject(model, record.type)) needed.push(key.split('\u0000'));
      });
    });
    const documents = new Map<string, Json>();
    if (needed.length > 0) {
      const loaded = await client.query<{ country_code: string; party_id: string; id: string; document: Json }>(
        `select country_code, party_id, id, document from ${table}
          where generation = $1 and (country_code, party_id, id) in (select * from unnest($2::text[], $3::text[], $4::text[]))`,
        [gen, needed.map((k) => k[0]), needed.map((k) => k[1]), needed.map((k) => k[2])],
      );
      for (const r of loaded.rows) documents.set(`${r.country_code}\u0000${r.party_id}\u0000${r.id}`, r.document);
    }
    const changed = new Set<string>();
    // When an object was created, for the rows this batch inserts (an update keeps the stored one):
    // the time of its first applied event here, so a replay lists objects in the same order.
    const createdAt = new Map<string, string>();
    // Every key deleted at some point of the batch. Its row is deleted before the upserts, so an
    // object deleted and created again here is inserted afresh, with the time of its new creation:
    // the same row whichever way the events are cut into batches (live, or a replay).
    const deleted = new Set<string>();
    const rejects: Array<{ partition: number; offset: string; subject: string; type: string; reason: string }> = [];
    const quarantines: QuarantineEntry[] = [];
    work.forEach((w, wi) => {
      let rejected = 0;
      let quarantined = 0;
      w.fresh.forEach((record, i) => {
        if (record.quarantine) {
          quarantines.push(record.quarantine);
          quarantined++;
          return;
        }
        const path = parsed[wi]?.[i];
        const result = !path
          ? ({ kind: 'rejected', reason: `unreadable subject ${record.subject}` } as const)
          : model === 'locations'
            ? applyLocationEvent(documents.get(keyOf(path)), record.type, path, record.data)
            : applyTariffEvent(documents.get(keyOf(path)), record.type, record.data);
        if (result.kind === 'deleted' && path) {
          // Gone from here on: a later event of this batch sees no stored object.
          documents.delete(keyOf(path));
          changed.delete(keyOf(path));
          createdAt.delete(keyOf(path));
          deleted.add(keyOf(path));
        } else if (result.kind === 'upsert' && path) {
          documents.set(keyOf(path), result.document);
          changed.add(keyOf(path));
          if (!createdAt.has(keyOf(path))) createdAt.set(keyOf(path), creationTime(record.time));
        } else {
          rejected++;
          rejects.push({ partition: w.partition, offset: record.offset, subject: record.subject, type: record.type, reason: result.kind === 'rejected' ? result.reason : 'unknown' });
        }
      });
      outcomes.set(w.partition, { applied: w.fresh.length - rejected - quarantined, skipped: w.records.length - w.fresh.length, rejected, quarantined });
    });
    if (deleted.size > 0) {
      const keys = [...deleted].map((k) => k.split('\u0000') as [string, string, string]);
      await client.query(
        `delete from ${table} t using unnest($2::text[], $3::text[], $4::text[]) as k(cc, pid, id)
          where t.generation = $1 and t.country_code = k.cc and t.party_id = k.pid and t.id = k.id`,
        [gen, keys.map((k) => k[0]), keys.map((k) => k[1]), keys.map((k) => k[2])],
      );
    }
    if (changed.size > 0) {
      // Keys travel as text arrays, the documents as one JSON array that Postgres splits without
      // parsing them into trees (json column, migration 007): text arrays would escape every
      // document twice, which made a rebuild's batches of thousands of locations three times slower.
      const cc: string[] = [];
      const pid: string[] = [];
      const id: string[] = [];
      const lastUpdated: unknown[] = [];
      const created: unknown[] = [];
      const docs: Json[] = [];
      for (const k of changed) {
        const [c, p, i] = k.split('\u0000') as [string, string, string];
        const doc = documents.get(k) as Json;
        cc.push(c);
        pid.push(p);
        id.push(i);
        lastUpdated.push(doc['last_updated']);
        created.push(createdAt.get(k) || doc['last_updated']);
        docs.push(doc);
      }
      await client.query(
        `insert into ${table} (generation, country_code, party_id, id, last_updated, created_at, document)
         select $1, k.cc, k.pid, k.id, k.lu::timestamptz, k.ca::timestamptz, d.doc
           from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) with ordinality as k(cc, pid, id, lu, ca, n)
           join json_array_elements($7::json) with ordinality as d(doc, n) using (n)
         on conflict (generation, country_code, party_id, id) do update set last_updated = excluded.last_updated, document = excluded.document`,
        [gen, cc, pid, id, lastUpdated, created, JSON.stringify(docs)],
      );
    }
    if (rejects.length > 0) {
      await client.query(
        `insert into projection_rejects (model, generation, partition, "offset", subject, event_type, reason)
         select $1, $2, r.partition, r."offset", r.subject, r.type, r.reason
           from jsonb_to_recordset($3::jsonb) as r(partition int, "offset" bigint, subject text, type text, reason text)
         on conflict do nothing`,
        [model, gen, JSON.stringify(rejects)],
      );
    }
    if (quarantines.length > 0) await client.query(quarantineInsertSql(1), [quarantineParam(quarantines)]);
    // The new positions and the commit. (No NOTIFY: nothing listens, read-your-writes polls the
    // positions, and a NOTIFY would serialise every commit on Postgres's notification queue lock.)
    const moved = work.filter((w) => w.fresh.length > 0).map((w) => ({ partition: w.partition, next: BigInt((w.fresh[w.fresh.length - 1] as ProjectedRecord).offset) + 1n }));
    await client.query(
      `update projection_offsets o set next_offset = v.next, updated_at = now()
         from (values ${moved.map((m) => `(${m.partition}, ${m.next.toString()}::bigint)`).join(', ')}) as v(partition, next)
        where o.model = '${model}' and o.generation = ${gen} and o.partition = v.partition;
       commit`,
    );
    return batches.map((b) => outcomes.get(b.partition) ?? { applied: 0, skipped: b.records.length, rejected: 0, quarantined: 0 });
  } catch (e) {
    await client.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

export function postgresReadModelStore(pool: Pool): ReadModelStore {
  return {
    async applyBatch(model, partition, records, generation) {
      const [outcome] = await applyBatches(pool, model, [{ partition, records }], generation);
      return outcome ?? { applied: 0, skipped: records.length, rejected: 0, quarantined: 0 };
    },

    applyBatches(model, batches, generation) {
      return applyBatches(pool, model, batches, generation);
    },

    redrive(model, record) {
      if (!Object.hasOwn(TABLE, model)) throw new Error(`unknown read model ${model}`);
      return redriveRecord(pool, TABLE[model], model, record);
    },

    async positions(model, generation) {
      const gen = generation ?? (await generationOf(pool, model));
      const { rows } = await pool.query<{ partition: number; next_offset: string }>(
        'select partition, next_offset from projection_offsets where model = $1 and generation = $2',
        [model, gen],
      );
      return new Map(rows.map((r) => [r.partition, BigInt(r.next_offset)]));
    },

    async listVisible(model, platformId, page) {
      const table = TABLE[model];
      // Keys first, in creation order (migration 008: the order must not change while a partner pages
      // through; its index carries every column the filter and the order need, so skipped rows are
      // never fetched), documents only for the page; the count is a separate index scan.
      // The visible CPOs are one array the scan filters by (chr(31), the unit separator, cannot occur
      // in a CiString): joined instead, the planner expects one row, sorts every matching key and
      // takes twice as long at deep offsets; filtered, it walks the page index in order and stops.
      // Visibility is decided per request from the routing rules (interface document, Routing).
      const visible = `
        with visible_cpos as (
          select r.cpo_country_code as cc, r.cpo_party_id as pid
            from routing_rules r
            join parties e on e.platform_id = $1 and e.role = 'EMSP' and e.suspended_at is null
                          and e.country_code = r.emsp_country_code and e.party_id = r.emsp_party_id
            join parties c on c.role = 'CPO' and c.suspended_at is null
                          and c.country_code = r.cpo_country_code and c.party_id = r.cpo_party_id
           where r.enabled
        ),
        generation as (select active from read_model_generations where model = $2),
        matching as (
          select t.generation, t.created_at, t.country_code, t.party_id, t.id
            from ${table} t
           where t.generation = (select active from generation)
             and t.country_code || chr(31) || t.party_id = any(array(select cc || chr(31) || pid from visible_cpos))
             and ($3::timestamptz is null or t.last_updated >= $3)
             and ($4::timestamptz is null or t.last_updated < $4)
        )`;
      const params = [platformId, model, page.dateFrom ?? null, page.dateTo ?? null];
      const [docs, count] = await Promise.all([
        pool.query<{ document: string }>(
          `${visible},
           page as (select * from matching order by created_at, country_code, party_id, id offset $5 limit $6)
           select d.document::text as document
             from page p join ${table} d using (generation, country_code, party_id, id)
            order by p.created_at, p.country_code, p.party_id, p.id`,
          [...params, page.offset, page.limit],
        ),
        pool.query<{ total: string }>(`${visible} select count(*) as total from matching`, params),
      ]);
      return { documentsJson: docs.rows.map((r) => r.document), total: Number(count.rows[0]?.total ?? 0) };
    },

    async findVisible(model, platformId, path) {
      const table = TABLE[model];
      const { rows } = await pool.query<{ document: Json }>(
        `select t.document from ${table} t
          where t.generation = (select active from read_model_generations where model = $2)
            and t.country_code = $3 and t.party_id = $4 and t.id = $5
            and (
              exists (select 1 from parties o where o.platform_id = $1 and o.role = 'CPO' and o.country_code = t.country_code and o.party_id = t.party_id)
              or exists (
                select 1 from routing_rules r
                  join parties e on e.platform_id = $1 and e.role = 'EMSP' and e.suspended_at is null
                                and e.country_code = r.emsp_country_code and e.party_id = r.emsp_party_id
                  join parties c on c.role = 'CPO' and c.suspended_at is null
                                and c.country_code = r.cpo_country_code and c.party_id = r.cpo_party_id
                 where r.enabled and r.cpo_country_code = t.country_code and r.cpo_party_id = t.party_id))`,
        [platformId, model, path.countryCode, path.partyId, path.id.toUpperCase()],
      );
      const document = rows[0]?.document;
      if (!document) return undefined;
      return model === 'locations' ? findInLocation(document, path) : document;
    },

    async locationOwners(locationId, emsp) {
      const { rows } = await pool.query<{ country_code: string; party_id: string }>(
        `select l.country_code, l.party_id from locations l
          join routing_rules r on r.enabled and r.cpo_country_code = l.country_code and r.cpo_party_id = l.party_id
                              and r.emsp_country_code = $2 and r.emsp_party_id = $3
          where l.generation = (select active from read_model_generations where model = 'locations') and l.id = $1`,
        [locationId.toUpperCase(), emsp.countryCode, emsp.partyId],
      );
      return rows.map((r) => ({ countryCode: r.country_code, partyId: r.party_id }));
    },

    beginRebuild(model) {
      return inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ active: number }>('select active from read_model_generations where model = $1 for update', [model]);
        const active = rows[0]?.active ?? 1;
        const building = active + 1;
        // Leftovers of an aborted rebuild of the same generation start from scratch.
        await client.query(`delete from ${TABLE[model]} where generation = $1`, [building]);
        await client.query('delete from projection_offsets where model = $1 and generation = $2', [model, building]);
        await client.query('delete from projection_rejects where model = $1 and generation = $2', [model, building]);
        await client.query('update read_model_generations set building = $2 where model = $1', [model, building]);
        return { active, building };
      });
    },

    switchOver(model, building) {
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
        if (![...live].every(([p, offset]) => (rebuilt.get(p) ?? 0n) >= offset)) return false;
        await client.query('update read_model_generations set active = $2, building = null where model = $1', [model, building]);
        await client.query('delete from projection_offsets where model = $1 and generation < $2', [model, building]);
        return true;
      });
    },

    async maintain(model) {
      await pool.query(`delete from ${TABLE[model]} where generation < (select active from read_model_generations where model = $1)`, [model]);
      await pool.query(`vacuum (analyze) ${TABLE[model]}`);
    },

    async analyze(model) {
      await pool.query(`analyze ${TABLE[model]}`);
    },

    async counts(model, generation) {
      const { rows } = await pool.query<{ n: string }>(`select count(*) as n from ${TABLE[model]} where generation = $1`, [generation]);
      return Number(rows[0]?.n ?? 0);
    },

    async exists(model, path) {
      // A location (or tariff) needs only its key, so its document is not read; an EVSE or connector
      // is looked up in the location document, as a detail GET finds it.
      const needsDocument = path.evseUid !== undefined;
      const { rows } = await pool.query<{ document: Json | null }>(
        `select ${needsDocument ? 'document' : 'null as document'} from ${TABLE[model]}
          where generation = (select active from read_model_generations where model = $1) and country_code = $2 and party_id = $3 and id = $4`,
        [model, path.countryCode, path.partyId, path.id.toUpperCase()],
      );
      const row = rows[0];
      if (!row) return false;
      return !needsDocument || (row.document !== null && findInLocation(row.document, path) !== undefined);
    },
  };
}
