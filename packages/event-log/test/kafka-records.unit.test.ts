// kafkajs is patched (patches/kafkajs@2.2.4.patch) where records are encoded and decoded: encoding
// allocated a zero-filled buffer per header and a Buffer per varint (the largest share of a PATCH's
// cost in the ingress), decoding copied the headers object once per header. The patch must not change
// a single byte on the wire: encoded record batches are compared with digests of what upstream kafkajs
// 2.2.4 encodes for the same input; decoded records must come back as upstream decodes them.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { eventHeaders, type HubEvent } from '@hub/events';

const require = createRequire(import.meta.url);
type Headers = Record<string, string | Buffer | Array<string | Buffer>>;
type RecordInput = { offsetDelta: number; timestampDelta: number; key: Buffer | null; value: Buffer | null; headers?: Headers };
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (r: RecordInput) => unknown;
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as {
  RecordBatch: (batch: Record<string, unknown>) => Promise<{ buffer: Buffer }>;
};
type DecodedRecord = { key: Buffer | null; value: Buffer | null; offset: string; timestamp: string; headers: Record<string, Buffer | Buffer[]> };
const decodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (decoder: unknown) => Promise<{ records: DecodedRecord[] }>;
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => unknown;

const event: HubEvent = {
  id: '9b2f6a1e-1c1d-4d7e-8f00-1234567890ab',
  type: 'ocpi.locations.evse-patched.v1',
  source: 'ingress',
  subject: 'NL/BEN/LOC-1/3256',
  time: '2026-11-21T10:00:00.123Z',
  key: 'NL/BEN/LOC-1',
  data: { status: 'CHARGING', last_updated: '2026-11-21T10:00:00Z' },
  correlationId: 'corr-é-€',
  requestId: 'req-1',
  from: 'NL/BEN',
};

async function encodeBatch(records: RecordInput[]): Promise<Buffer> {
  const batch = await RecordBatch({
    firstOffset: 0,
    firstTimestamp: 1_795_000_000_000,
    maxTimestamp: 1_795_000_000_000 + records.length,
    lastOffsetDelta: records.length - 1,
    producerId: 4242,
    producerEpoch: 3,
    firstSequence: 17,
    records: records.map((r) => encodeRecord(r)),
  });
  return batch.buffer;
}

const digest = (bytes: Buffer) => `${bytes.length}:${createHash('sha256').update(bytes).digest('hex')}`;

// Each case reaches another branch of the encoder: multi-byte UTF-8, null key and value, Buffer
// and array header values, and varints of 1 to 4 bytes (offset deltas, sizes, long timestamps).
const cases: Array<{ name: string; records: () => RecordInput[]; upstream: string }> = [
  {
    name: 'a hub event with its CloudEvents headers',
    records: () => [{ offsetDelta: 0, timestampDelta: 0, key: Buffer.from(event.key), value: Buffer.from(JSON.stringify(event.data)), headers: eventHeaders(event) }],
    upstream: '416:ad5ee997641d268edeeba8ac2183d131be324c841edf196fbcdfec2da5c545cf',
  },
  {
    name: 'a tombstone without headers',
    records: () => [{ offsetDelta: 0, timestampDelta: 5, key: null, value: null }],
    upstream: '68:23bf71aeea843b597f0d880d4dac1ae947ff83065201d0e050f4cbffaa6c7ac2',
  },
  {
    name: 'Buffer and array header values',
    records: () => [
      { offsetDelta: 0, timestampDelta: 1, key: Buffer.from('k'), value: Buffer.from('v'), headers: { bin: Buffer.from([0, 1, 255]), many: ['a', Buffer.from('b'), 'ç'] } },
    ],
    upstream: '100:0620c4390ca182fb55219c7ddcdaef8d3939816a63454befed53d4f21e47924b',
  },
  {
    name: '300 records with growing values and long timestamp deltas',
    records: () =>
      Array.from({ length: 300 }, (_, i) => ({
        offsetDelta: i,
        timestampDelta: i * 2 ** 33,
        key: Buffer.from(`NL/BEN/LOC-${i}`),
        value: Buffer.from('€'.repeat(i * 7)),
        headers: eventHeaders({ ...event, id: `id-${i}`, subject: `NL/BEN/LOC-${i}` }),
      })),
    upstream: '1023151:3bda882bb881f7db3e23d0d1d3490b9a8c672bc1689019f5caa51747317c557a',
  },
  {
    name: 'a 3 MB value (4-byte length varint)',
    records: () => [{ offsetDelta: 0, timestampDelta: 0, key: Buffer.from('big'), value: Buffer.alloc(3 * 1024 * 1024, 'x'), headers: { ce_id: 'big' } }],
    upstream: '3145815:a42b5d1f55739af649bef3e44b4d8b4cafa7bc63e6e7beead7774edb6a29a771',
  },
];

describe('kafkajs record decoding (patched)', () => {
  it('gives back every record with its key, value, offset, timestamp and headers', async () => {
    const records = cases[0]?.records() ?? [];
    const [decoded] = (await decodeBatch(new Decoder(await encodeBatch(records)))).records;
    assert.ok(decoded);
    assert.equal(decoded.key?.toString(), event.key);
    assert.deepEqual(JSON.parse(decoded.value?.toString() ?? ''), event.data);
    assert.equal(decoded.offset, '0');
    assert.equal(decoded.timestamp, '1795000000000');
    assert.deepEqual(
      Object.fromEntries(Object.entries(decoded.headers).map(([k, v]) => [k, String(v)])),
      eventHeaders(event),
    );
  });

  it('collects a repeated header key into an array in record order, as upstream kafkajs does', async () => {
    const [decoded] = (await decodeBatch(new Decoder(await encodeBatch([{ offsetDelta: 0, timestampDelta: 0, key: null, value: null, headers: { one: 'a', many: ['x', 'y', 'z'] } }])))).records;
    assert.equal(decoded?.headers['one']?.toString(), 'a');
    assert.deepEqual((decoded?.headers['many'] as Buffer[]).map(String), ['x', 'y', 'z']);
  });

  it('keeps a "__proto__" header as an own field: a record cannot change the headers object\'s prototype', async () => {
    const [decoded] = (await decodeBatch(new Decoder(await encodeBatch([{ offsetDelta: 0, timestampDelta: 0, key: null, value: null, headers: { ['__proto__']: 'p', ce_id: 'i' } }])))).records;
    assert.ok(decoded);
    assert.equal(Object.getPrototypeOf(decoded.headers), Object.prototype);
    assert.equal(String(Object.getOwnPropertyDescriptor(decoded.headers, '__proto__')?.value), 'p');
    assert.equal(decoded.headers['ce_id']?.toString(), 'i');
  });
});

describe('kafkajs record encoding (patched)', () => {
  for (const c of cases) {
    it(`${c.name}: the same bytes as upstream kafkajs 2.2.4`, async () => {
      assert.equal(digest(await encodeBatch(c.records())), c.upstream);
    });
  }

  it('the installed kafkajs carries the patch (pnpm patchedDependencies applied it)', () => {
    for (const file of ['record/v0/index.js', 'record/v0/decoder.js']) {
      assert.match(readFileSync(require.resolve(`kafkajs/src/protocol/recordBatch/${file}`), 'utf8'), /Patched \(hub\)/);
    }
  });
});
