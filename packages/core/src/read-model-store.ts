import type { ObjectPath } from './object-path.ts';
import type { ApplyOutcome, Json, ObjectsChanged, PartitionBatch, ProjectedRecord, ReadModel } from './read-model-records.ts';

// The read models of locations, tariffs and tokens (reference design, Postgres): the port the projector
// applies batches through and the ingress and hubctl read from. Its adapter applies a batch of one
// partition in one transaction together with that partition's offset (packages/store).

/**
 * A narrower list than the routed one: `pricesExcludeTaxes`, only the tariffs whose prices exclude taxes
 * (column tariffs.prices_exclude_taxes, migration 032): what a 2.2.1 or 2.1.1 reader may be given, since
 * a 2.3.0 tariff with tax-inclusive prices and no vat has no excl. VAT price in those versions
 * (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md).
 */
export interface ListNarrowing {
  readonly pricesExcludeTaxes?: boolean;
}

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

/** An event of a read model's topic that the read model did not apply (projection_rejects). */
export interface ProjectionReject {
  readonly partition: number;
  readonly offset: string;
  readonly subject: string;
  readonly type: string;
  readonly reason: string;
  readonly at: Date;
}

/** One snapshot record: the object's whole document and creation time, or null when it is gone. */
export interface RestoredObject {
  readonly path: ObjectPath;
  readonly document: Json | null;
  /** ISO 8601; the row's created_at (lists are ordered by it). */
  readonly createdAt: string;
}

/** Objects of the active generation with the change positions they reflect (hubctl readmodel snapshot). */
export interface LiveObjectsChunk {
  readonly objects: ReadonlyArray<{ readonly path: ObjectPath; readonly document: Json; readonly createdAt: string }>;
  /** Every change partition's next offset, read after the chunk's rows were locked. */
  readonly positions: ReadonlyMap<number, bigint>;
}

export interface ReadModelStore {
  /**
   * Applies one partition's records in order, exactly once: records before the stored position are
   * skipped, the rest change the rows and move the position, all in one transaction. `generation`
   * defaults to the active one (a rebuild names the one it builds).
   */
  applyBatch(model: ReadModel, partition: number, records: readonly ProjectedRecord[], generation?: number): Promise<ApplyOutcome>;
  /**
   * The batches of several partitions in one transaction, each exactly once as applyBatch does: the
   * projector applies what one fetch brought for all its partitions at once. `onChanged` gets the objects
   * changed, before the commit (snapshot topics, docs/decisions/0014-snapshot-topics.md).
   */
  applyBatches(model: ReadModel, batches: ReadonlyArray<PartitionBatch>, generation?: number, onChanged?: ObjectsChanged): Promise<ApplyOutcome[]>;
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

/**
 * Whether a read model has applied everything appended to its topic so far (read-your-writes): the
 * ingress asks it before answering a PATCH of an object it may not see yet, the dispatcher before
 * re-sending an eMSP's tokens from the tokens read model (@hub/service-kit's projectionWait).
 */
export interface ProjectionWait {
  /** Resolves true once the read model has applied everything appended to the topic so far; false after the bound. */
  caughtUp(model: ReadModel): Promise<boolean>;
}
