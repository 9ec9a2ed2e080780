// How the event log's consumers pace their fetches and commits (platformatic-subscription.ts,
// platformatic-consume-loop.ts, platformatic-topic-reader.ts).

/**
 * How often a consumer commits its resolved offsets to Kafka (Kafka's auto.commit.interval.ms
 * default). Postgres holds the positions; Kafka's committed offset is only a hint, so it is committed
 * every interval and when the consumer stops, not after every batch: at 1,000 PATCH/s an OffsetCommit
 * (a replicated write to __consumer_offsets) per batch and partition was as many requests as the
 * producers sent, and the broker's CPU fell by about a fifth without them. A replica that dies
 * re-reads at most that interval's records when its store has no positions.
 */
export const OFFSET_COMMIT_INTERVAL_MS = 5_000;

/**
 * Wait at most this long after a fetch before the next one, once caught up. A fetch answers as soon as
 * one record is there, so at moderate rates every fetch brought a few records and every batch cost a
 * transaction, a commit and a fetch: at 1,000 PATCH/s the projector and its Postgres spent about as
 * much CPU as the ingress. A consumer that reached the head of its partition fetches again only this
 * long after the previous fetch came back (the consumer-side twin of a producer's linger.ms); one behind
 * (a backlog, a rebuild, a replay) fetches again at once.
 */
export const FETCH_LINGER_MS = 20;

/** How long an empty fetch of a one-off reader waits at the broker (SubscribeOptions.ephemeral). */
export const EPHEMERAL_FETCH_WAIT_MS = 200;
