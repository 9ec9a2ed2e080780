// SPIKE: the two Kafka clients through the same event-log calls, against the stack's own broker:
// appends (acks=all, idempotent, group commit) from `concurrency` callers of one event each, then one
// consumer group reading them all back from the start and decoding them as the hub does. Per phase:
// events/s, CPU of this process per event (user + system), and its memory after the phase. kafkajs is
// the adapter services use (kafka-event-log.ts); @platformatic/kafka is the spike beside it
// (packages/event-log/src/platformatic-spike.ts). Each client gets its own topic, same partitions.
// Run: npm run bench -- event-log-clients [events=20000] [concurrency=50] [clients=kafkajs,platformatic]
// (platformatic-kip848: its consumer in the KIP-848 group protocol, Kafka 4.x only)
import { consumePlatformatic, createKafkaEventLog, createPlatformaticAppender } from '@hub/event-log';
import { newEvent, type HubEvent } from '@hub/events';
import { printFigures } from './figures.ts';

const total = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 50);
const clients = (process.argv[4] ?? 'kafkajs,platformatic').split(',');
const brokers = (process.env['TEST_KAFKA_BROKERS'] ?? '').split(',');
const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const run = Date.now().toString(36);

function event(i: number): HubEvent {
  return newEvent({
    type: 'ocpi.locations.evse-patched.v1',
    source: 'ingress',
    subject: `NL/BEN/LOC-${i % 500}/3256`,
    key: `NL/BEN/LOC-${i % 500}`,
    data: { status: 'CHARGING', last_updated: new Date().toISOString() },
    correlationId: crypto.randomUUID(),
    requestId: crypto.randomUUID(),
    from: 'NL/BEN',
  });
}

interface Phase { readonly eventsPerS: number; readonly cpuUsPerEvent: number; readonly rssMb: number; readonly heapMb: number }

async function measure(events: number, work: () => Promise<unknown>): Promise<Phase> {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await work();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  const mem = process.memoryUsage();
  return { eventsPerS: events / seconds, cpuUsPerEvent: (used.user + used.system) / events, rssMb: mem.rss / 2 ** 20, heapMb: mem.heapUsed / 2 ** 20 };
}

async function appendAll(append: (topic: string, events: readonly HubEvent[]) => Promise<void>, topic: string): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) await append(topic, [event(next++)]);
  }));
}

const admin = createKafkaEventLog({ brokers, clientId: 'bench-admin', logger: quiet });
const figures: Record<string, number> = {};
const lines: string[] = [];
try {
  for (const client of clients) {
    const topic = `bench.clients.${client}.${run}`;
    const a = admin.topicAdmin();
    await a.createTopics([{ name: topic, partitions: 12, replicationFactor: 1 }], { waitForLeaders: true });
    await a.close();
    let append: Phase;
    let consume: Phase;
    if (client === 'kafkajs') {
      const log = createKafkaEventLog({ brokers, clientId: 'bench-kafkajs', logger: quiet });
      append = await measure(total, () => appendAll((t, e) => log.append(t, e), topic));
      // A consumer group of its own reads the topic to its end, decoding every record.
      consume = await measure(total, async () => {
        const read = await log.readTopics([topic], { until: 'end', timeoutMs: 600_000 });
        const decoded = read.records.filter((r) => r.event).length;
        if (decoded !== total) throw new Error(`decoded ${decoded} of ${total}`);
      });
      await log.close();
    } else if (client === 'platformatic' || client === 'platformatic-kip848') {
      const appender = createPlatformaticAppender({ brokers, clientId: 'bench-platformatic' });
      append = await measure(total, () => appendAll((t, e) => appender.append(t, e), topic));
      await appender.close();
      consume = await measure(total, async () => {
        const groupProtocol = client === 'platformatic-kip848' ? 'consumer' : 'classic';
        const decoded = await consumePlatformatic({ brokers, clientId: 'bench-platformatic', groupId: `bench-${client}-${run}`, topic, count: total, groupProtocol });
        if (decoded !== total) throw new Error(`decoded ${decoded} of ${total}`);
      });
    } else {
      throw new Error(`unknown client ${client}: kafkajs, platformatic or platformatic-kip848`);
    }
    lines.push(`${client.padEnd(19)} append ${append.eventsPerS.toFixed(0).padStart(6)} events/s ${append.cpuUsPerEvent.toFixed(1).padStart(6)} µs CPU/event rss ${append.rssMb.toFixed(0)} MB | consume ${consume.eventsPerS.toFixed(0).padStart(6)} events/s ${consume.cpuUsPerEvent.toFixed(1).padStart(6)} µs CPU/event rss ${consume.rssMb.toFixed(0)} MB heap ${consume.heapMb.toFixed(0)} MB`);
    Object.assign(figures, {
      [`${client.replace('-', '_')}_append_events_per_s`]: append.eventsPerS,
      [`${client.replace('-', '_')}_append_cpu_us_per_event`]: append.cpuUsPerEvent,
      [`${client.replace('-', '_')}_consume_events_per_s`]: consume.eventsPerS,
      [`${client.replace('-', '_')}_consume_cpu_us_per_event`]: consume.cpuUsPerEvent,
      [`${client.replace('-', '_')}_rss_mb`]: consume.rssMb,
    });
  }
} finally {
  await admin.close();
}
process.stdout.write(`event-log clients: ${total} events, ${concurrency} concurrent appenders of one event, 12 partitions, one broker (node ${process.version})\n${lines.join('\n')}\n`);
printFigures({ ...figures, events: total, concurrency });
