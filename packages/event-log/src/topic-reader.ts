import type { ConsumedRecord } from '@hub/core';

// Reading topics back (tests, the cluster tests' checks, benchmarks): a bounded read from the
// beginning, in a consumer group of its own that is deleted afterwards. Services consume through
// EventLog.subscribe; this is for code that wants to see what a topic holds.

/** A record read back: the consumed record with the producer's timestamp (CreateTime, ms). */
export interface TopicRecord extends ConsumedRecord {
  readonly timestamp: number;
}

export interface ReadTopicsOptions {
  /**
   * When the read is complete: 'end', at the ends the topics have when the read begins (records
   * appended later are left out); or once the predicate holds for the records read so far (asked
   * after each record, in the order they arrive).
   */
  readonly until: 'end' | ((records: readonly TopicRecord[]) => boolean);
  /** Stops after this long in any case, with what it read. */
  readonly timeoutMs: number;
}

export interface TopicRead {
  /** In the order they arrived (each partition's in offset order). */
  readonly records: TopicRecord[];
  /** Whether `until` was reached before the timeout. */
  readonly complete: boolean;
}
