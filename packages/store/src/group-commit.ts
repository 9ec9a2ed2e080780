import { DependencyUnavailable } from '@hub/core';

// Group commit for the store's hot single-row writes (a CDR cost Postgres two commits
// of its own). Calls made while a statement runs are gathered and written together by the next one:
// one statement and one commit for many requests. A call made while nothing runs is written at once,
// so batching adds no waiting when the hub is idle; under load the batch grows with the concurrency.

export interface GroupCommitOptions<I, O> {
  /** Writes a batch in one statement; one result per input, in order. */
  readonly batch: (inputs: readonly I[]) => Promise<readonly O[]>;
  /**
   * Writes one input alone: the fallback when the batch statement failed for a reason that may be one
   * input's (a value Postgres refuses), so that no request fails for another's data.
   */
  readonly single: (input: I) => Promise<O>;
  /** The most inputs one statement carries (bounds the statement and its parameter arrays). */
  readonly maxBatch?: number;
}

/**
 * Whether a failed batch says Postgres itself is away (connection refused or lost, shutting down):
 * every input would fail alone too, so they fail at once with that error (the ingress answers 503)
 * instead of each trying again against a server that is not there. A deadlock or serialization
 * failure is a matter of the batch, not of Postgres: those are retried one by one.
 */
function postgresAway(e: unknown): boolean {
  return e instanceof DependencyUnavailable && !e.contention;
}

/** A function of one input whose calls are written in batches (see above). */
export function groupCommit<I, O>(options: GroupCommitOptions<I, O>): (input: I) => Promise<O> {
  const maxBatch = options.maxBatch ?? 500;
  let queued: Array<{ input: I; resolve: (o: O) => void; reject: (e: unknown) => void }> = [];
  let writing = false;
  const write = async (): Promise<void> => {
    writing = true;
    try {
      while (queued.length > 0) {
        const batch = queued.slice(0, maxBatch);
        queued = queued.slice(batch.length);
        if (batch.length === 1) {
          const [only] = batch as [(typeof batch)[number]];
          await options.single(only.input).then(only.resolve, only.reject);
          continue;
        }
        try {
          const results = await options.batch(batch.map((b) => b.input));
          batch.forEach((b, i) => b.resolve(results[i] as O));
        } catch (e) {
          if (postgresAway(e)) {
            for (const b of batch) b.reject(e);
            continue;
          }
          await Promise.all(batch.map((b) => options.single(b.input).then(b.resolve, b.reject)));
        }
      }
    } finally {
      writing = false;
    }
  };
  return (input) =>
    new Promise<O>((resolve, reject) => {
      queued.push({ input, resolve, reject });
      if (!writing) void write();
    });
}
