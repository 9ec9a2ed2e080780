// infra/topics.json (applied by the stack at start) is what the modules declare (generate-topics.ts),
// the topic names the code uses stay in step with it, and the topic settings keep events durable.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { topics, type TopicDefinition } from '@hub/events';
import { withChangeRetention } from '@hub/event-log';
import { renderTopicsFile, topicsPath } from '../generate-topics.ts';


const definitions = (JSON.parse(readFileSync(new URL('../topics.json', import.meta.url), 'utf8')) as { topics: TopicDefinition[] }).topics;
const byName = new Map(definitions.map((d) => [d.name, d]));

describe('infra/topics.json', () => {
  it('is what the modules declare (run `node infra/generate-topics.ts` and commit)', () => {
    assert.ok(readFileSync(topicsPath, 'utf8') === renderTopicsFile(), 'infra/topics.json is stale or edited by hand: declare topics in the module folders of packages/modules, run `node infra/generate-topics.ts` and commit');
  });

  it('defines exactly the topics the code uses, each once', () => {
    const names = definitions.map((d) => d.name);
    assert.equal(new Set(names).size, names.length, 'a topic is defined twice');
    assert.deepEqual([...names].sort(), Object.values(topics).sort());
  });

  it('gives every topic at least one partition', () => {
    for (const d of definitions) assert.ok(Number.isInteger(d.partitions) && d.partitions >= 1, d.name);
  });

  it('replicates every topic at least 3 times with min.insync.replicas 2 for production', () => {
    for (const d of definitions) {
      assert.ok(Number.isInteger(d.replicationFactor) && d.replicationFactor >= 3, d.name);
      assert.equal(d.config['min.insync.replicas'], '2', d.name);
    }
  });

  it('keeps CDRs and the registry trail forever (retention.ms -1)', () => {
    for (const topic of [topics.cdrs, topics.registry]) {
      assert.equal(byName.get(topic)?.config['retention.ms'], '-1', topic);
    }
  });

  it('keeps 30 days of location, tariff and token changes, and their live objects in compacted snapshot topics of as many partitions (docs/decisions/0014-snapshot-topics.md)', () => {
    for (const [change, snapshot] of [[topics.locations, topics.locationsSnapshot], [topics.tariffs, topics.tariffsSnapshot], [topics.tokens, topics.tokensSnapshot]] as const) {
      assert.equal(byName.get(change)?.config['retention.ms'], '2592000000', change);
      assert.equal(byName.get(snapshot)?.config['cleanup.policy'], 'compact', snapshot);
      assert.equal(byName.get(snapshot)?.config['retention.ms'], undefined, snapshot);
      assert.equal(byName.get(snapshot)?.partitions, byName.get(change)?.partitions, snapshot);
    }
  });

  it('keeps the registry trail in one partition for one total order', () => {
    assert.equal(byName.get(topics.registry)?.partitions, 1);
  });

  it('gives every config value as a string, as the Kafka admin API expects', () => {
    for (const d of definitions) {
      for (const [k, v] of Object.entries(d.config)) assert.equal(typeof v, 'string', `${d.name} ${k}`);
    }
  });

  it('bounds by HUB_CHANGE_RETENTION_MS exactly the change topics a snapshot backs, and keeps their snapshots\' tombstones as long (docs/decisions/0014-snapshot-topics.md)', () => {
    const day = withChangeRetention(definitions, 86_400_000);
    const changed = day.filter((d, i) => JSON.stringify(d) !== JSON.stringify(definitions[i])).map((d) => d.name).sort();
    assert.deepEqual(changed, [topics.locations, topics.locationsSnapshot, topics.tariffs, topics.tariffsSnapshot, topics.tokens, topics.tokensSnapshot].sort());
    const at = (name: string) => day.find((d) => d.name === name)?.config;
    assert.equal(at(topics.tariffs)?.['retention.ms'], '86400000');
    assert.equal(at(topics.tariffsSnapshot)?.['delete.retention.ms'], '86400000');
    assert.equal(at(topics.cdrs)?.['retention.ms'], '-1');
    // Forever: the change topics keep everything; the snapshots keep their own tombstone retention.
    const forever = withChangeRetention(definitions, -1);
    assert.equal(forever.find((d) => d.name === topics.tokens)?.config['retention.ms'], '-1');
    assert.equal(forever.find((d) => d.name === topics.tokensSnapshot)?.config['delete.retention.ms'], '2592000000');
  });
});
