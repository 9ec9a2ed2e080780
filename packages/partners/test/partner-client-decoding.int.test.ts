// The partner client decodes an answer after joining its chunks: a real HTTP server on loopback sends
// an OCPI envelope in two writes that split a multi-byte UTF-8 character, as a partner's server or a
// proxy may, and the display_text arrives intact (decoding each chunk alone turned both halves into
// U+FFFD).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ocpiPartnerClient } from '../src/ocpi-partner-client.ts';

describe('partner client: answers decoded as a whole', () => {
  let server: Server;
  let url: string;
  const text = 'Ladevorgang für Ihr Fahrzeug gestoppt — चार्जिंग बंद';
  const envelope = Buffer.from(JSON.stringify({ status_code: 1000, data: { allowed: 'ALLOWED', info: { language: 'de', text } }, timestamp: '2026-01-01T00:00:00Z' }), 'utf8');
  // Split inside the three bytes of the first Devanagari character.
  const cut = envelope.indexOf(Buffer.from('च', 'utf8')) + 1;

  before(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(envelope.subarray(0, cut));
      // A pause so the client reads the halves as two chunks.
      setTimeout(() => res.end(envelope.subarray(cut)), 50);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ocpi/2.2.1/tokens/X/authorize`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('keeps a multi-byte character split across two chunks', async () => {
    assert.ok(envelope[cut - 1]! >= 0x80 && envelope[cut]! >= 0x80, 'the cut lies inside a multi-byte character');
    const client = ocpiPartnerClient({ policy: { allowHttp: true, allowedHosts: ['127.0.0.1'] }, timeoutMs: 5000 });
    const { envelope: answer } = await client.call('POST', url, 'token', { requestId: 'r', correlationId: 'c' }, {});
    assert.equal((answer.data as { info: { text: string } }).info.text, text);
  });
});
