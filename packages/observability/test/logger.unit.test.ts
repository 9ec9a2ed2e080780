// What an operator reads after an unexpected failure: the error's name, message and stack, with
// secrets still redacted.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger } from '../src/logger.ts';

async function logged(write: (log: ReturnType<typeof createLogger>) => void): Promise<Record<string, unknown>> {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
  const log = createLogger({ service: 'test', stream });
  write(log);
  await new Promise((r) => setImmediate(r));
  return JSON.parse(lines.join('').trim().split('\n')[0] ?? '{}') as Record<string, unknown>;
}

describe('the JSON logger', () => {
  it('logs an error passed as a field with its name, message, stack and cause', async () => {
    const err = new TypeError('cannot read properties of undefined', { cause: new RangeError('inner') });
    const entry = await logged((log) => log.error('request failed', { err, path: '/ocpi/2.2.1/cdrs' }));
    const loggedErr = entry['err'] as Record<string, unknown>;
    assert.equal(loggedErr['name'], 'TypeError');
    assert.equal(loggedErr['message'], 'cannot read properties of undefined');
    assert.match(String(loggedErr['stack']), /logger\.unit\.test\.ts/);
    assert.deepEqual((loggedErr['cause'] as Record<string, unknown>)['message'], 'inner');
  });

  it("keeps an error's own fields and still redacts secrets among them", async () => {
    const err = Object.assign(new Error('refused'), { code: '57P01', token: 'a-partner-token' });
    const entry = await logged((log) => log.warn('dependency unavailable', { err, authorization: 'Token abc' }));
    const e = entry['err'] as Record<string, unknown>;
    assert.equal(e['code'], '57P01');
    assert.equal(e['token'], '[redacted]');
    assert.equal(entry['authorization'], '[redacted]');
    assert.ok(!JSON.stringify(entry).includes('a-partner-token'));
  });
});
