// The hub never calls loopback, private, link-local or otherwise special addresses unless the operator
// allow-listed the host, and only https unless plain http is switched on.
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { describe, it } from 'node:test';
import { PartnerCallError } from '@hub/core';
import { checkOutboundUrl, guardedLookup, isSpecialAddress, type OutboundPolicy } from '../src/outbound-policy.ts';

const strict: OutboundPolicy = { allowHttp: false, allowedHosts: [] };

function refusal(policy: OutboundPolicy, url: string): PartnerCallError {
  try {
    checkOutboundUrl(policy, url);
  } catch (e) {
    assert.ok(e instanceof PartnerCallError, `expected a PartnerCallError for ${url}`);
    return e;
  }
  assert.fail(`${url} was allowed`);
}

describe('isSpecialAddress', () => {
  for (const address of [
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.254',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::FFFF:10.0.0.1',
    '::ffff:7f00:1',
  ]) {
    it(`refuses ${address}`, () => {
      assert.equal(isSpecialAddress(address), true);
    });
  }

  for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8']) {
    it(`allows the public address ${address}`, () => {
      assert.equal(isSpecialAddress(address), false);
    });
  }

  it('treats anything that is not an IP address as special', () => {
    assert.equal(isSpecialAddress('example.com'), true);
    assert.equal(isSpecialAddress(''), true);
  });
});

// Every IPv6 form that embeds an IPv4 address is judged by the embedded address.
describe('isSpecialAddress: IPv6 forms that embed an IPv4 address', () => {
  for (const [form, address] of [
    ['IPv4-compatible ::/96, dotted', '::127.0.0.1'],
    ['IPv4-compatible ::/96, hex', '::7f00:1'],
    ['IPv4-compatible ::/96, private', '::10.0.0.1'],
    ['IPv4-compatible ::/96, link-local metadata', '::a9fe:a9fe'],
    ['IPv4-mapped, expanded', '0:0:0:0:0:ffff:7f00:0001'],
    ['IPv4-translated ::ffff:0:0:0/96', '::ffff:0:7f00:1'],
    ['NAT64 64:ff9b::/96, dotted', '64:ff9b::127.0.0.1'],
    ['NAT64 64:ff9b::/96, hex', '64:ff9b::a9fe:a9fe'],
    ['NAT64 local-use 64:ff9b:1::/48', '64:ff9b:1::8.8.8.8'],
    ['6to4 2002::/16 of 127.0.0.1', '2002:7f00:1::1'],
    ['6to4 2002::/16 of 10.1.2.3', '2002:a01:203::'],
    ['6to4 2002::/16 of 169.254.169.254', '2002:a9fe:a9fe:1::5'],
    ['Teredo 2001::/32, client 127.0.0.1', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
    ['Teredo 2001::/32, client 192.168.1.1', '2001:0:4136:e378:8000:63bf:3f57:fefe'],
  ] as const) {
    it(`refuses ${address} (${form})`, () => {
      assert.equal(isSpecialAddress(address), true);
    });
  }

  for (const [form, address] of [
    ['IPv4-compatible ::/96', '::8.8.8.8'],
    ['NAT64 64:ff9b::/96', '64:ff9b::8.8.8.8'],
    ['6to4 2002::/16', '2002:808:808::1'],
    ['Teredo 2001::/32, client 8.8.8.8', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
  ] as const) {
    it(`allows ${address} (${form} of a public address)`, () => {
      assert.equal(isSpecialAddress(address), false);
    });
  }

  it('refuses http://[::127.0.0.1]/ as a URL', () => {
    assert.equal(refusal({ allowHttp: true, allowedHosts: [] }, 'http://[::127.0.0.1]/').reason, 'URL_NOT_ALLOWED');
  });
});

describe('checkOutboundUrl', () => {
  it('allows an https URL on a public host and returns it parsed', () => {
    const url = checkOutboundUrl(strict, 'https://partner.example.com/ocpi/versions');
    assert.ok(url instanceof URL);
    assert.equal(url.href, 'https://partner.example.com/ocpi/versions');
    assert.equal(checkOutboundUrl(strict, 'https://8.8.8.8/ocpi').hostname, '8.8.8.8');
  });

  it('refuses plain http unless allowHttp is on', () => {
    const e = refusal(strict, 'http://partner.example.com/ocpi/versions');
    assert.equal(e.reason, 'URL_NOT_ALLOWED');
    assert.equal(e.url, 'http://partner.example.com/ocpi/versions');
    assert.match(e.message, /ALLOW_HTTP_PARTNER_URLS=true/, 'names the development switch');
    assert.equal(checkOutboundUrl({ allowHttp: true, allowedHosts: [] }, 'http://partner.example.com/x').protocol, 'http:');
  });

  it('refuses other schemes even when http is allowed', () => {
    for (const url of ['ftp://partner.example.com/x', 'file:///etc/passwd', 'ws://partner.example.com/']) {
      assert.equal(refusal({ allowHttp: true, allowedHosts: [] }, url).reason, 'URL_NOT_ALLOWED', url);
    }
  });

  it('refuses a string that is not a URL', () => {
    assert.equal(refusal(strict, 'partner.example.com/ocpi').reason, 'URL_NOT_ALLOWED');
  });

  it('refuses URLs with user info', () => {
    assert.equal(refusal(strict, 'https://user:secret@partner.example.com/').reason, 'URL_NOT_ALLOWED');
    assert.equal(refusal(strict, 'https://user@partner.example.com/').reason, 'URL_NOT_ALLOWED');
  });

  for (const url of [
    'https://127.0.0.1/ocpi',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]:8443/ocpi',
    'https://localhost/ocpi',
    'https://LOCALHOST:8443/ocpi',
    'https://10.0.0.5/ocpi',
    'https://[::ffff:127.0.0.1]/ocpi',
  ]) {
    it(`refuses ${url} unless its host is allow-listed`, () => {
      const e = refusal(strict, url);
      assert.equal(e.reason, 'URL_NOT_ALLOWED');
      assert.equal(e.name, 'PartnerCallError');
      assert.match(e.message, /PARTNER_ALLOWED_HOSTS/, 'names the switch that allows the host');
    });
  }

  it('lets an allow-listed loopback or link-local host through', () => {
    const policy: OutboundPolicy = { allowHttp: true, allowedHosts: ['127.0.0.1', 'localhost', '::1', '169.254.169.254'] };
    assert.equal(checkOutboundUrl(policy, 'http://127.0.0.1:9000/ocpi').port, '9000');
    assert.equal(checkOutboundUrl(policy, 'https://LocalHost/ocpi').hostname, 'localhost');
    assert.equal(checkOutboundUrl(policy, 'https://[::1]/ocpi').hostname, '[::1]');
    assert.equal(checkOutboundUrl(policy, 'https://169.254.169.254/').hostname, '169.254.169.254');
  });

  it('allow-lists only the hosts named', () => {
    const policy: OutboundPolicy = { allowHttp: false, allowedHosts: ['localhost'] };
    assert.equal(refusal(policy, 'https://127.0.0.1/ocpi').reason, 'URL_NOT_ALLOWED');
  });
});

describe('guardedLookup', () => {
  // 'localhost' resolves through /etc/hosts: no network needed.
  const lookup = (policy: OutboundPolicy, options: object = {}) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family: number | undefined }>((resolve) => {
      guardedLookup(policy)('localhost', options, (err, address, family) => resolve({ err, address, family }));
    });

  it('refuses a name that resolves to a loopback address with EHUBBLOCKED', async () => {
    const { err, address } = await lookup(strict);
    assert.ok(err);
    assert.equal(err.code, 'EHUBBLOCKED');
    assert.match(err.message, /localhost resolves to .*PARTNER_ALLOWED_HOSTS/);
    assert.deepEqual(address, []);
  });

  it('resolves an allow-listed name to its first address', async () => {
    const { err, address, family } = await lookup({ allowHttp: false, allowedHosts: ['localhost'] });
    assert.equal(err, null);
    assert.equal(typeof address, 'string');
    assert.equal(isSpecialAddress(address as string), true);
    assert.ok(family === 4 || family === 6);
  });

  it('returns every address when asked for all', async () => {
    const { err, address } = await lookup({ allowHttp: false, allowedHosts: ['LOCALHOST'] }, { all: true });
    assert.equal(err, null);
    assert.ok(Array.isArray(address) && address.length > 0);
  });
});
