import type { FailureKind, QuarantineFailure } from '@hub/core';

// The one way every consumer applies a batch: a failure of a dependency keeps the
// partition where it is (the caller retries after a backoff); a failure of the record is isolated to
// the record(s) that cause it, which are quarantined while the others are applied.

/** Why a record is quarantined instead of applied. */
export interface Verdict {
  readonly failure: QuarantineFailure;
  readonly reason: string;
}

/** A record of a batch, and the verdict when it is to be quarantined instead of applied. */
export interface Item<R> {
  readonly record: R;
  readonly quarantine?: Verdict | undefined;
}

/**
 * A batch failed for a reason that is not the record's (dependency or unknown): nothing after the
 * last applied chunk moved, the same work must be retried later.
 */
export class RetryLater extends Error {
  readonly kind: Exclude<FailureKind, 'record'>;
  constructor(kind: Exclude<FailureKind, 'record'>, cause: unknown) {
    super(failureReason(cause), { cause });
    this.name = 'RetryLater';
    this.kind = kind;
  }
}

/** Whether an event's data is a JSON object (what every hub event carries); anything else is undecodable. */
export function hasObjectData(event: { readonly data: unknown } | undefined): boolean {
  return typeof event?.data === 'object' && event.data !== null && !Array.isArray(event.data);
}

/** Error class, SQLSTATE (when there is one) and message: what an operator needs, never data. */
export function failureReason(err: unknown): string {
  if (!(err instanceof Error)) return String(err).slice(0, 500);
  const code = (err as { code?: unknown }).code;
  return `${err.name}${typeof code === 'string' ? ` ${code}` : ''}: ${err.message}`.slice(0, 500);
}

/**
 * Applies the items in order through `apply`, which must apply the unflagged ones, quarantine the
 * flagged ones and move the position past the whole chunk, all or nothing (one transaction). When a
 * chunk fails with a record failure, it is halved until the failing record stands alone; that record
 * is then flagged and its chunk applied again (it is quarantined, the position moves). A failure of
 * any other kind throws RetryLater: the chunks applied before it stay applied (their positions moved),
 * a retry of the whole batch skips them. Returns the items quarantined.
 */
export async function applyIsolating<R>(items: ReadonlyArray<Item<R>>, apply: (chunk: ReadonlyArray<Item<R>>) => Promise<void>, classify: (err: unknown) => FailureKind): Promise<Array<Item<R>>> {
  const quarantined: Array<Item<R>> = [];
  const run = async (chunk: ReadonlyArray<Item<R>>): Promise<void> => {
    if (chunk.length === 0) return;
    try {
      await apply(chunk);
      for (const item of chunk) if (item.quarantine) quarantined.push(item);
      return;
    } catch (e) {
      const kind = classify(e);
      // A record failure of a chunk whose only record is already flagged: quarantining itself fails,
      // which no record can cause. Never skip on a guess: retry.
      if (kind !== 'record' || (chunk.length === 1 && chunk[0]?.quarantine)) throw new RetryLater(kind === 'record' ? 'unknown' : kind, e);
      if (chunk.length === 1) {
        await run([{ record: (chunk[0] as Item<R>).record, quarantine: { failure: 'record', reason: failureReason(e) } }]);
        return;
      }
      const half = Math.ceil(chunk.length / 2);
      await run(chunk.slice(0, half));
      await run(chunk.slice(half));
    }
  };
  await run(items);
  return quarantined;
}
