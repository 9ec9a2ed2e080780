// How much one fetch of a consumer brings (memory). Kafka's Java consumer's defaults are 50 MiB a
// fetch and 1 MiB a partition; the hub's consumers hand every batch of a fetch to their handler
// decoded (a few times its bytes as objects) and fetch again only once all are handled, so what a
// consumer holds is bounded by these figures. 4 MiB keeps a projector's group commit at a few
// thousand locations (its transactions stay large) while decoded batches stay in the tens of MiB.

export interface FetchLimits {
  /** Bytes of one fetch response at most (Kafka's fetch.max.bytes). */
  readonly maxBytes: number;
  /** Bytes of one partition in a fetch at most (max.partition.fetch.bytes). */
  readonly maxBytesPerPartition: number;
}

export const DEFAULT_FETCH_LIMITS: FetchLimits = { maxBytes: 4 * 1024 * 1024, maxBytesPerPartition: 1024 * 1024 };

/**
 * The limits of a consumer from what its caller asked. Given only a per-partition size, a fetch
 * brings at most four such partitions (enough for a few partitions to be applied side by side).
 * A partition never gets more than the whole fetch. Kafka still returns a first record batch larger
 * than the limits whole (KIP-74), so a consumer always progresses; the hub's producers keep record
 * batches far below them.
 */
export function fetchLimits(asked: { readonly maxBytes?: number | undefined; readonly maxBytesPerPartition?: number | undefined } = {}): FetchLimits {
  const perPartition = asked.maxBytesPerPartition ?? DEFAULT_FETCH_LIMITS.maxBytesPerPartition;
  const maxBytes = asked.maxBytes ?? (asked.maxBytesPerPartition !== undefined ? perPartition * 4 : DEFAULT_FETCH_LIMITS.maxBytes);
  return { maxBytes, maxBytesPerPartition: Math.min(perPartition, maxBytes) };
}
