// Topic names (reference design, Topics). The definitions (partitions, replication, retention) are in
// infra/topics.json; a test keeps the two in step. Names carry a version: a breaking change to an
// event schema is a new topic version, never an edit in place.
export const topics = {
  locations: 'ocpi.locations.v1',
  tariffs: 'ocpi.tariffs.v1',
  sessions: 'ocpi.sessions.v1',
  cdrs: 'ocpi.cdrs.v1',
  commands: 'ocpi.commands.v1',
  registry: 'hub.registry.v1',
} as const;

export type TopicId = keyof typeof topics;

/** The physical topic name: an optional prefix isolates test runs that share a broker. */
export function topicName(prefix: string, topic: string): string {
  // TOPIC_PREFIX "x" and "x." both give "x.ocpi.locations.v1".
  return prefix ? `${prefix.endsWith('.') ? prefix : `${prefix}.`}${topic}` : topic;
}
