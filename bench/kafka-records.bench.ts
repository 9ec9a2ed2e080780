// CPU cost of encoding hub events into a Kafka produce request and of decoding them from a record
// batch, in this process (no I/O): what the ingress pays per event before the socket write, and what a
// consumer (projector, dispatcher, rebuild) pays per record before its own work. kafkajs is patched
// (patches/kafkajs@2.2.4.patch): its record encoder allocated a zero-filled 512-byte buffer per header
// and a Buffer per varint, its decoder copied the headers object once per header; the unit test
// packages/event-log/test/kafka-records.unit.test.ts proves the bytes and the decoded records unchanged.
// Run: npm run bench -- kafka-records [records per request=18] [requests=20000]
// (18 is the group commit measured under 50 connections of the location-patch benchmark.)
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { eventHeaders, newEvent } from '@hub/events';
import { repoRoot } from '@hub/testing';
import { printFigures } from './figures.ts';

const perRequest = Number(process.argv[2] ?? 18);
const requests = Number(process.argv[3] ?? 20_000);
const require = createRequire(join(repoRoot, 'packages', 'event-log', 'package.json'));
type ProduceRequest = (args: Record<string, unknown>) => { encode(): Promise<Buffer | { buffer: Buffer }> };
const produceRequest = require('kafkajs/src/protocol/requests/produce/v3/request.js') as ProduceRequest;
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (record: Record<string, unknown>) => unknown;
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: (batch: Record<string, unknown>) => Promise<{ buffer: Buffer }> };
const decodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (decoder: unknown) => Promise<{ records: unknown[] }>;
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => unknown;

function messages(): Array<{ key: string; value: string; headers: Record<string, string>; timestamp: number }> {
  return Array.from({ length: perRequest }, (_, i) => {
    const event = newEvent({
      type: 'ocpi.locations.evse-patched.v1',
      source: 'ingress',
      subject: `NL/BEN/LOC-${i}/3256`,
      key: `NL/BEN/LOC-${i}`,
      data: { status: 'CHARGING', last_updated: new Date().toISOString() },
      correlationId: crypto.randomUUID(),
      requestId: crypto.randomUUID(),
      from: 'NL/BEN',
    });
    return { key: event.key, value: JSON.stringify(event.data), headers: eventHeaders(event), timestamp: Date.now() };
  });
}

async function round(encode: boolean): Promise<{ microsPerRecord: number; bytesPerRecord: number }> {
  let bytes = 0;
  const started = process.hrtime.bigint();
  for (let r = 0; r < requests; r++) {
    const batch = messages();
    if (!encode) continue;
    const request = produceRequest({
      acks: -1,
      timeout: 30_000,
      compression: 0,
      producerId: 1,
      producerEpoch: 0,
      transactionalId: null,
      topicData: [{ topic: 'ocpi.locations.v1', partitions: [{ partition: 0, firstSequence: 0, messages: batch }] }],
    });
    const encoded = await request.encode();
    bytes += Buffer.isBuffer(encoded) ? encoded.length : encoded.buffer.length;
  }
  const micros = Number(process.hrtime.bigint() - started) / 1000;
  return { microsPerRecord: micros / requests / perRequest, bytesPerRecord: bytes / requests / perRequest };
}

/** Decodes one record batch of perRequest hub events `requests` times: µs per record. */
async function decodeRound(): Promise<number> {
  const records = messages().map((m, i) => encodeRecord({ offsetDelta: i, timestampDelta: 0, key: Buffer.from(m.key), value: Buffer.from(m.value), headers: m.headers }));
  const batch = (await RecordBatch({ firstOffset: 0, firstTimestamp: Date.now(), lastOffsetDelta: perRequest - 1, records })).buffer;
  const started = process.hrtime.bigint();
  let decoded = 0;
  for (let r = 0; r < requests; r++) decoded += (await decodeBatch(new Decoder(batch))).records.length;
  return Number(process.hrtime.bigint() - started) / 1000 / decoded;
}

const rounds: Array<{ building: number; total: number; bytes: number; decoding: number }> = [];
for (let i = 0; i < 5; i++) {
  const building = await round(false);
  const total = await round(true);
  rounds.push({ building: building.microsPerRecord, total: total.microsPerRecord, bytes: total.bytesPerRecord, decoding: await decodeRound() });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const building = median(rounds.map((r) => r.building));
const total = median(rounds.map((r) => r.total));
process.stdout.write(
  `kafka records, ${perRequest} hub events per request (or batch), ${requests} requests, median of 5 rounds (node ${process.version}):\n` +
    `  building the event (ids, headers, JSON): ${building.toFixed(2)} µs per event\n` +
    `  encoding into the produce request:       ${(total - building).toFixed(2)} µs per event (${rounds[0]?.bytes.toFixed(0)} bytes per record)\n` +
    `  decoding from a record batch:            ${median(rounds.map((r) => r.decoding)).toFixed(2)} µs per record\n`,
);
printFigures({
  building_us_per_event: building,
  encoding_us_per_event: total - building,
  bytes_per_record: rounds[0]?.bytes ?? Number.NaN,
  decoding_us_per_record: median(rounds.map((r) => r.decoding)),
  events_per_request: perRequest,
  requests,
});
