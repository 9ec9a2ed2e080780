// Kafka answers some calls with a retriable error while a topic is new or a leader is being settled
// (UNKNOWN_TOPIC_OR_PARTITION while its metadata reaches every broker, NOT_LEADER_FOR_PARTITION just
// after it was created): a test's own admin call is repeated for a bounded while, as the hub's clients
// do, instead of failing on the timing of one run.
export async function whileRetriable<T>(call: () => Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await call();
    } catch (e) {
      if ((e as { retriable?: boolean } | null)?.retriable !== true || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
