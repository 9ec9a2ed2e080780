// The event log (createEventLog; its client: docs/decisions/0010-kafka-4-by-default.md, The client)
// through the EventLog calls the services make, against the stack's own broker: appends (acks=all,
// idempotent, group commit) from `concurrency` callers of one event each, then a one-off consumer group
// subscribing from the start until every event is handled, decoded as the hub does. Per phase: events/s,
// CPU of this process per event (user + system), and its memory after the phase.
// Run: npm run bench -- event-log [events=20000] [concurrency=50]
import type { EventLog, Subscription } from '@hub/core';
import { createEventLog } from '@hub/event-log';
import { newEvent, type HubEvent } from '@hub/events';
import { printFigures } from './figures.ts';

const total = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 50);
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

/**
 * Subscribes from the start in a one-off group until `total` records are handled, every one decoded;
 * resolves with the subscription still running, so that leaving the group is not timed.
 */
async function subscribeAll(log: EventLog, topic: string, group: string): Promise<Subscription> {
  let handled = 0;
  let decoded = 0;
  let done: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (done = resolve));
  const subscription = await log.subscribe({
    group, topics: [topic], ephemeral: true,
    onBatch: async (batch) => {
      handled += batch.records.length;
      decoded += batch.records.filter((r) => r.event).length;
      if (handled >= total) done();
    },
  });
  await all;
  if (decoded !== total) {
    await subscription.stop();
    throw new Error(`decoded ${decoded} of ${total}`);
  }
  return subscription;
}

const topic = `bench.event-log.${run}`;
const log = await createEventLog({ brokers, clientId: 'bench-event-log', logger: quiet });
let append: Phase;
let consume: Phase;
try {
  const admin = log.topicAdmin();
  await admin.createTopics([{ name: topic, partitions: 12, replicationFactor: 1 }], { waitForLeaders: true });
  await admin.close();
  append = await measure(total, () => appendAll((t, e) => log.append(t, e), topic));
  let subscription: Subscription | undefined;
  consume = await measure(total, async () => (subscription = await subscribeAll(log, topic, `bench-event-log-${run}`)));
  await subscription?.stop();
} finally {
  await log.close();
}
process.stdout.write(
  `event log: ${total} events, ${concurrency} concurrent appenders of one event, 12 partitions, one broker (node ${process.version})\n` +
    `append ${append.eventsPerS.toFixed(0).padStart(6)} events/s ${append.cpuUsPerEvent.toFixed(1).padStart(6)} µs CPU/event rss ${append.rssMb.toFixed(0)} MB | ` +
    `consume ${consume.eventsPerS.toFixed(0).padStart(6)} events/s ${consume.cpuUsPerEvent.toFixed(1).padStart(6)} µs CPU/event rss ${consume.rssMb.toFixed(0)} MB heap ${consume.heapMb.toFixed(0)} MB\n`,
);
printFigures({
  append_events_per_s: append.eventsPerS,
  append_cpu_us_per_event: append.cpuUsPerEvent,
  consume_events_per_s: consume.eventsPerS,
  consume_cpu_us_per_event: consume.cpuUsPerEvent,
  rss_mb: consume.rssMb,
  events: total,
  concurrency,
});
