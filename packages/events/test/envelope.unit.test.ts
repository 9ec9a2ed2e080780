// The CloudEvents 1.0 envelope in Kafka binary mode: attributes as ce_* headers, the payload as the
// record value; and the physical topic names.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventFromRecord, eventHeaders, newEvent, recordValue, recordValueLength, type HubEvent } from '../src/envelope.ts';
import { topicName, topics } from '../src/topics.ts';

const base = {
  type: 'hub.registry.party-registered.v1',
  source: 'hubctl',
  subject: 'NL/ABC/CPO',
  key: 'NL/ABC/CPO',
  data: { name: 'ABC Charging', roles: ['CPO'] },
};

const full: HubEvent = {
  ...base,
  id: '9b2f6a1e-1c1d-4d7e-8f00-1234567890ab',
  time: '2025-03-01T10:00:00.123Z',
  correlationId: 'corr-1',
  requestId: 'req-1',
  from: 'NL/ABC',
  to: 'DE/XYZ',
};

describe('newEvent', () => {
  it('fills a unique UUID id and the current time in ISO 8601 UTC with milliseconds', () => {
    const before = Date.now();
    const a = newEvent(base);
    const b = newEvent(base);
    assert.match(a.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(a.id, b.id);
    assert.match(a.time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const t = Date.parse(a.time);
    assert.ok(t >= before - 1 && t <= Date.now() + 1);
    assert.equal(a.type, base.type);
    assert.deepEqual(a.data, base.data);
  });

  it('keeps an id and time given by the caller', () => {
    const e = newEvent({ ...base, id: 'fixed-id', time: '2020-01-01T00:00:00.000Z' });
    assert.equal(e.id, 'fixed-id');
    assert.equal(e.time, '2020-01-01T00:00:00.000Z');
  });
});

describe('eventHeaders', () => {
  it('carries the CloudEvents 1.0 attributes and the content type', () => {
    const e = newEvent(base);
    assert.deepEqual(eventHeaders(e), {
      ce_specversion: '1.0',
      ce_id: e.id,
      ce_type: base.type,
      ce_source: base.source,
      ce_subject: base.subject,
      ce_time: e.time,
      'content-type': 'application/json',
    });
  });

  it('adds correlation id, request id and the OCPI from/to parties when present', () => {
    const headers = eventHeaders(full);
    assert.equal(headers['x-correlation-id'], 'corr-1');
    assert.equal(headers['x-request-id'], 'req-1');
    assert.equal(headers['ocpi-from'], 'NL/ABC');
    assert.equal(headers['ocpi-to'], 'DE/XYZ');
    assert.equal(headers['ce_specversion'], '1.0');
  });

  it('omits the optional headers when absent', () => {
    const headers = eventHeaders(newEvent(base));
    for (const name of ['x-correlation-id', 'x-request-id', 'ocpi-from', 'ocpi-to']) assert.equal(name in headers, false, name);
  });
});

describe('recordValue', () => {
  it('is the data as JSON, the same whether or not its size was asked for first (snapshot chunking)', () => {
    const data = { name: 'Laadpaal Zuidplein – Noord', evses: [{ uid: 'E1', status: 'AVAILABLE' }] };
    const sized = newEvent({ ...base, data });
    assert.equal(recordValueLength(sized), JSON.stringify(data).length);
    assert.equal(recordValue(sized), JSON.stringify(data));
    assert.equal(recordValue(newEvent({ ...base, data })), JSON.stringify(data));
    assert.deepEqual(eventFromRecord(sized.key, eventHeaders(sized), recordValue(sized) ?? ''), sized);
  });

  it('is null for a tombstone, whose size is 0', () => {
    const tombstone = newEvent({ ...base, data: null });
    assert.equal(recordValue(tombstone), null);
    assert.equal(recordValueLength(tombstone), 0);
  });
});

describe('eventFromRecord', () => {
  it('rebuilds the event from its headers and JSON value', () => {
    assert.deepEqual(eventFromRecord(full.key, eventHeaders(full), JSON.stringify(full.data)), full);
    const minimal = newEvent(base);
    assert.deepEqual(eventFromRecord(minimal.key, eventHeaders(minimal), JSON.stringify(minimal.data)), minimal);
  });

  it('uses the record key as subject when ce_subject is absent', () => {
    const { ce_subject: _omitted, ...headers } = eventHeaders(full);
    assert.equal(eventFromRecord('NL/ABC/LOC1', headers, '{}')?.subject, 'NL/ABC/LOC1');
  });

  for (const missing of ['ce_id', 'ce_type', 'ce_source', 'ce_time']) {
    it(`returns undefined for a record without ${missing}`, () => {
      const headers: Record<string, string | undefined> = { ...eventHeaders(full) };
      delete headers[missing];
      assert.equal(eventFromRecord(full.key, headers, '{}'), undefined);
      assert.equal(eventFromRecord(full.key, { ...eventHeaders(full), [missing]: '' }, '{}'), undefined);
    });
  }

  it('returns undefined for a value that is not JSON', () => {
    assert.equal(eventFromRecord(full.key, eventHeaders(full), 'not json'), undefined);
    assert.equal(eventFromRecord(full.key, eventHeaders(full), ''), undefined);
    assert.equal(eventFromRecord(full.key, eventHeaders(full), '{"truncated":'), undefined);
  });
});

describe('topicName', () => {
  it('is the topic itself without a prefix', () => {
    assert.equal(topicName('', topics.cdrs), 'ocpi.cdrs.v1');
  });

  it('prepends the prefix and a dot to isolate test runs', () => {
    assert.equal(topicName('run42', topics.registry), 'run42.hub.registry.v1');
  });

  it('takes a prefix that already ends in a dot as it is (TOPIC_PREFIX=x. gives x.ocpi...)', () => {
    assert.equal(topicName('x.', topics.locations), 'x.ocpi.locations.v1');
  });

  it('names every topic with a version suffix', () => {
    for (const name of Object.values(topics)) assert.match(name, /\.v\d+$/);
  });
});

describe('eventIdFor', () => {
  it('gives one UUID per name, the same every time, and different names different ids', async () => {
    const { eventIdFor } = await import('../src/envelope.ts');
    const id = eventIdFor('cdr:NL/CPO/CDR1:abc');
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(eventIdFor('cdr:NL/CPO/CDR1:abc'), id);
    assert.notEqual(eventIdFor('cdr:NL/CPO/CDR1:abd'), id);
  });
});
