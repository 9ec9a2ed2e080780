import type { RawRecord } from './event-log.ts';

// Records a consumer could not apply (migration 013): what a consumer quarantines, in the same
// transaction or statement as its position, and the port operators list and re-drive them through.

export type QuarantineFailure = 'record' | 'undecodable';

export interface QuarantineEntry {
  readonly consumerGroup: string;
  readonly record: RawRecord;
  readonly ceType?: string | undefined;
  readonly ceId?: string | undefined;
  readonly failureKind: QuarantineFailure;
  readonly reason: string;
}

export type QuarantineState = 'quarantined' | 'redrive' | 'redriven' | 'superseded' | 'discarded';

export interface QuarantinedRecord {
  readonly id: string;
  readonly consumerGroup: string;
  readonly record: RawRecord;
  readonly ceType: string | null;
  readonly ceId: string | null;
  readonly failureKind: QuarantineFailure;
  readonly reason: string;
  readonly state: QuarantineState;
  readonly attempts: number;
  readonly firstSeenAt: Date;
  readonly lastSeenAt: Date;
}

export interface QuarantineStore {
  /** Direct insert (outside a consumer's transaction): tests and consumers without stored positions. */
  insert(entries: readonly QuarantineEntry[]): Promise<void>;
  list(filter?: { consumerGroup?: string; states?: readonly QuarantineState[] }): Promise<QuarantinedRecord[]>;
  get(id: string): Promise<QuarantinedRecord | undefined>;
  /** Asks the consumer to apply records again (quarantined ones only); returns their ids. */
  requestRedrive(target: { id: string } | { consumerGroup?: string }): Promise<string[]>;
  /** Resolves a quarantined record without applying it. */
  discard(id: string): Promise<boolean>;
  /** Records waiting for an operator (quarantined or asked to be re-driven), by group and topic. */
  openCounts(): Promise<Array<{ consumerGroup: string; topic: string; count: number }>>;
  /** Re-drives an operator asked for, of one consumer group, oldest first. */
  pendingRedrives(consumerGroup: string, limit: number): Promise<QuarantinedRecord[]>;
  /** The outcome of a re-drive: applied (or superseded by newer state), or quarantined again with the new reason. */
  resolveRedrive(id: string, outcome: { state: 'redriven' | 'superseded' } | { state: 'quarantined'; reason: string }): Promise<void>;
}
