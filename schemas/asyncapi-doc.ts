import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { schemasDir } from './index.ts';
import { componentName, componentRef, readJson, schemaComponents, text, type Json } from './doc-components.ts';

// docs/asyncapi.json (AsyncAPI 3.0) from infra/topics.json and schemas/events: one channel per topic
// (partitions, replication, retention, cleanup policy, ordering), one message per event type with its
// CloudEvents headers (packages/events/src/envelope.ts, eventHeaders), Kafka key and value schema.
// Written by schemas/generate-api-docs.ts.

interface TopicDefinition {
  readonly name: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly config: Readonly<Record<string, string>>;
  readonly description: string;
}

const PARTY = '^[A-Z]{2}/[A-Z0-9]{3}$';

/** The record headers every event carries (eventHeaders): CloudEvents 1.0 binary mode plus routing and tracing. */
const CLOUD_EVENT_HEADERS: Json = {
  title: 'CloudEvents 1.0 Kafka binary-mode headers',
  description: 'CloudEvents attributes as ce_* headers (reference design, Event envelope); header values are UTF-8 strings.',
  type: 'object',
  required: ['ce_specversion', 'ce_id', 'ce_type', 'ce_source', 'ce_subject', 'ce_time', 'content-type'],
  properties: {
    ce_specversion: { const: '1.0' },
    ce_id: { type: 'string', minLength: 1, description: 'Unique per event (one per CDR for cdr-posted): consumers drop duplicates by it' },
    ce_type: { type: 'string', description: 'The event type, e.g. ocpi.cdrs.cdr-posted.v1' },
    ce_source: { type: 'string', minLength: 1, description: "The service or tool that appended it (ingress, hubctl, ...); for CDR events the hub's URI (see ocpi.cdrs.cdr-posted.v1)" },
    ce_subject: { type: 'string', description: 'The object: CC/PID/id[/evse_uid[/connector_id]] with URI-encoded segments, CC/PID/ROLE, a platform id or a command id' },
    ce_time: { type: 'string', format: 'date-time', description: 'ISO 8601 UTC with milliseconds' },
    'content-type': { const: 'application/json' },
    'x-correlation-id': { type: 'string', description: "The correlation id of the partner's request (or the operator's action)" },
    'x-request-id': { type: 'string', description: "The request id of the partner's request" },
    'ocpi-from': { type: 'string', pattern: PARTY, description: 'The sending party (the CPO for ocpi.* events) as CC/PID' },
    'ocpi-to': { type: 'string', pattern: PARTY, description: 'The receiving party (the eMSP of cdr_token for sessions and CDRs) as CC/PID' },
    'hub-sealed-driver-data': {
      type: 'string',
      pattern: '^[0-9a-f-]{36}\\.[A-Za-z0-9+/=]+$',
      description:
        "On ocpi.tokens.v1, ocpi.sessions.v1, ocpi.cdrs.v1 and ocpi.commands.v1 only: the driver's personal fields of the value, sealed under the token's data key, as <key_id>.<base64>; the value holds the key_id (a UUID) in each of those fields instead (docs/decisions/0013-erasure-by-destroying-data-keys.md). Only the hub opens it; once the driver's data is erased nobody can.",
    },
  },
};

/** The event types of schemas/events, by the topic their type names: ocpi.cdrs.cdr-posted.v1 -> ocpi.cdrs.v1. */
function eventTypes(): Array<{ type: string; topic: string; schema: Json }> {
  return readdirSync(join(schemasDir, 'events'))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const type = f.replace(/\.json$/, '');
      const [domain, area] = type.split('.');
      return { type, topic: `${domain}.${area}.v1`, schema: readJson('events', f) };
    });
}

/** The key sentence of an event schema's description ("key \"CC/PID/cdr_id\"", "Key and ce_subject: ..."). */
function keyDescription(schema: Json, topic: TopicDefinition): string {
  const match = /\b[Kk]ey(?: and ce_subject)?:? ("[^"]+"|[^;.]+)/.exec(text(schema['description'], ''));
  return match?.[1]?.trim().replace(/^"(.*)"$/, '$1') ?? topic.description;
}

function retentionText(ms: string | undefined): string {
  if (ms === '-1') return 'forever (retention.ms = -1)';
  return ms ? `${Number(ms) / 86_400_000} days (retention.ms = ${ms})` : 'broker default';
}

const channelId = (topic: string): string => topic.replace(/\./g, '-');

/**
 * What the CDR stream's contract adds to the common headers (README, The CDR topic): ce_source names
 * the hub, so source + id is unique across hub deployments (CloudEvents 1.0, source), and each CDR is
 * one record (docs/decisions/0003-each-cdr-once.md).
 */
const CDR_HEADERS: Json = {
  ce_id: { type: 'string', minLength: 1, description: 'One per CDR (derived from its owner, id and content); one record per ce_id in the topic' },
  ce_source: {
    type: 'string',
    format: 'uri',
    description: "The hub that accepted the CDR, as an absolute URI: its public URL (HUB_PUBLIC_URL) or, without one, urn:ocpi:<country_code>:<party_id> of the hub's own party. The same for every append of the CDR (ingress, the prober's relay). Before this contract it was the bare word ingress or prober.",
  },
};

// Long because: one AsyncAPI document built in one pass over infra/topics.json, its channels,
// operations and messages side by side.
export function buildAsyncApi(): Json {
  const topicsFile = JSON.parse(JSON.stringify(readJson('..', 'infra', 'topics.json'))) as { topics: TopicDefinition[] };
  const events = eventTypes();
  const channels: Json = {};
  const operations: Json = {};
  const messages: Json = {};
  for (const topic of topicsFile.topics) {
    const own = events.filter((e) => e.topic === topic.name);
    if (own.length === 0) throw new Error(`topic ${topic.name} has no event schema in schemas/events`);
    const id = channelId(topic.name);
    const channelMessages: Json = {};
    for (const { type, schema } of own) {
      const key = keyDescription(schema, topic);
      messages[componentName(type)] = {
        name: type,
        title: text(schema['title'], type),
        summary: `ce_type ${type} on ${topic.name}`,
        description: text(schema['description'], ''),
        contentType: 'application/json',
        headers: { allOf: [{ $ref: '#/components/schemas/CloudEventHeaders' }], properties: { ce_type: { const: type }, ...(topic.name === 'ocpi.cdrs.v1' ? CDR_HEADERS : {}) } },
        payload: { $ref: componentRef(`events/${type}.json`) },
        bindings: { kafka: { key: { type: 'string', description: key }, bindingVersion: '0.5.0' } },
      };
      channelMessages[componentName(type)] = { $ref: `#/components/messages/${componentName(type)}` };
    }
    const retention = retentionText(topic.config['retention.ms']);
    const ordering = `per key: every event of one key is in one partition, in append order; no order across keys (${topic.partitions} partition${topic.partitions === 1 ? ', so one total order' : 's'})`;
    channels[id] = {
      address: topic.name,
      title: topic.name,
      description: `${topic.description}. Retention: ${retention}. Ordering: ${ordering}. Deployments with TOPIC_PREFIX prepend "<prefix>." to the address.`,
      messages: channelMessages,
      bindings: {
        kafka: {
          topic: topic.name,
          partitions: topic.partitions,
          replicas: topic.replicationFactor,
          topicConfiguration: {
            'cleanup.policy': (topic.config['cleanup.policy'] ?? 'delete').split(','),
            'retention.ms': Number(topic.config['retention.ms'] ?? '-1'),
          },
          bindingVersion: '0.5.0',
        },
      },
      'x-retention': retention,
      'x-ordering': ordering,
      'x-min-insync-replicas': Number(topic.config['min.insync.replicas'] ?? '1'),
    };
    operations[`consume-${id}`] = {
      action: 'receive',
      title: `Consume ${topic.name}`,
      summary:
        topic.name === 'ocpi.cdrs.v1'
          ? 'What a consumer of this topic receives: each CDR once, one record per ce_id (README, The CDR topic: the one window where a copy is possible)'
          : 'What a consumer of this topic receives (at least once: dedupe on ce_id)',
      channel: { $ref: `#/channels/${id}` },
      messages: Object.keys(channelMessages).map((m) => ({ $ref: `#/channels/${id}/messages/${m}` })),
    };
  }
  const stray = events.filter((e) => !topicsFile.topics.some((t) => t.name === e.topic));
  if (stray.length > 0) throw new Error(`event types without a topic in infra/topics.json: ${stray.map((e) => e.type).join(', ')}`);
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'OCPI 2.2.1 roaming hub: event topics',
      version: '1.0.0',
      description: 'Generated by schemas/generate-api-docs.ts from infra/topics.json and schemas/events (see schemas/events/README.md). Events are CloudEvents 1.0 in Kafka binary mode: the attributes travel as ce_* headers and the record value is the JSON payload the message schema describes. The schemas are the hub\'s own JSON Schema 2020-12 files (a draft-07 reader ignores the few 2020-12 keywords, e.g. dependentRequired).',
    },
    defaultContentType: 'application/json',
    servers: { local: { host: '127.0.0.1:9092', protocol: 'kafka', description: '`npm start` (KAFKA_BROKERS in production)' } },
    channels,
    operations,
    components: {
      messages,
      schemas: { CloudEventHeaders: CLOUD_EVENT_HEADERS, ...schemaComponents(() => true) },
    },
  };
}
