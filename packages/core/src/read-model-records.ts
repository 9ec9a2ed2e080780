import type { HubEvent } from '@hub/events';
import type { ObjectPath } from './object-path.ts';
import type { QuarantineEntry } from './quarantine.ts';
import { utcTime } from './utc-time.ts';

// What the projector hands the read-model store (the ReadModelStore port, read-model-store.ts).

/**
 * The read models by name. Core names none of them: each module with a projection adds its own from
 * its folder (`declare module '@hub/core' { interface ReadModels { locations: true } }`), and
 * @hub/modules checks that these are exactly the modules with a projection
 * (docs/decisions/0016-a-module-is-one-folder.md).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface ReadModels {}

/** A read model: a module of the module table with a projection. */
export type ReadModel = keyof ReadModels;

export type Json = Record<string, unknown>;

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

/** What applying one partition's batch to a read model did. */
export interface ApplyOutcome {
  readonly applied: number;
  /** Records at or below the stored position: already applied (redelivery, rebalance, replay). */
  readonly skipped: number;
  readonly rejected: number;
  /** Older than the object the hub holds (newest wins, docs/decisions/0001-newest-state-wins.md): not applied. */
  readonly superseded: number;
  readonly quarantined: number;
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
 * An object as a committed batch left it, for the snapshot topic (docs/decisions/0014-snapshot-topics.md):
 * its whole document, or null when it is gone.
 */
export interface ObjectChange {
  /** The object (cc/pid/id) as its last event here named it: the change topic's key follows from it. */
  readonly path: ObjectPath;
  readonly partition: number;
  /** The change partition's next offset after the batch: the position this state reflects. */
  readonly nextOffset: bigint;
  readonly document: Json | null;
  /** The row's created_at (ISO 8601), for a document. */
  readonly createdAt?: string | undefined;
}

/** Called inside the batch's transaction, after its rows are written and before it commits. */
export type ObjectsChanged = (changes: readonly ObjectChange[]) => Promise<void>;
