// HUB_ENV, HUB_PUBLIC_URL, HUB_TRUSTED_PROXIES and HUB_TLS_* (docs/reference/configuration.md): a
// production ingress refuses to start without an https public URL (OCPI 2.2.1
// transport_and_format.asciidoc, Security and authentication), and X-Forwarded-For is believed only from a trusted proxy.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { ConfigError } from '@hub/config';
import { readIngressConfig } from '../src/config.ts';
import { clientAddress, trustedProxyList } from '../src/start.ts';

const key = randomBytes(32).toString('base64');
const problems = (env: Record<string, string>): readonly string[] => {
  try {
    readIngressConfig({ HUB_SECRET_KEY: key, ...env });
    return [];
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    return e.problems;
  }
};

test('production refuses a missing or non-https HUB_PUBLIC_URL; development allows http', () => {
  assert.match(problems({ HUB_ENV: 'production' }).join(), /HUB_PUBLIC_URL must be an https URL/);
  assert.match(problems({ HUB_ENV: 'production', HUB_PUBLIC_URL: 'http://hub.example.com' }).join(), /HUB_PUBLIC_URL must be an https URL/);
  assert.deepEqual(problems({ HUB_ENV: 'production', HUB_PUBLIC_URL: 'https://hub.example.com/' }), []);
  assert.deepEqual(problems({ HUB_PUBLIC_URL: 'http://127.0.0.1:8080' }), []);
  assert.match(problems({ HUB_ENV: 'staging' }).join(), /HUB_ENV must be/);
});

test('HUB_TLS_CERT_FILE and HUB_TLS_KEY_FILE go together; HUB_TRUSTED_PROXIES are addresses or CIDR blocks', () => {
  assert.match(problems({ HUB_TLS_CERT_FILE: '/etc/tls/cert.pem' }).join(), /go together/);
  assert.deepEqual(problems({ HUB_TLS_CERT_FILE: '/c.pem', HUB_TLS_KEY_FILE: '/k.pem', HUB_TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.2, fd00::/8' }), []);
  assert.match(problems({ HUB_TRUSTED_PROXIES: '10.0.0.0/33' }).join(), /not an IP address or CIDR block/);
  assert.match(problems({ HUB_TRUSTED_PROXIES: 'proxy.internal' }).join(), /not an IP address or CIDR block/);
});

test('the client address: the peer unless it is a trusted proxy, then the nearest untrusted hop', () => {
  const proxies = trustedProxyList(['10.0.0.0/8', '127.0.0.1']);
  // No proxy configured, or an untrusted peer: its X-Forwarded-For is the client's own claim.
  assert.equal(clientAddress('203.0.113.5', '198.51.100.1', trustedProxyList([])), '203.0.113.5');
  assert.equal(clientAddress('203.0.113.5', '198.51.100.1', proxies), '203.0.113.5');
  // A trusted peer: the rightmost hop it did not write as a trusted proxy.
  assert.equal(clientAddress('10.1.2.3', '198.51.100.1, 203.0.113.7', proxies), '203.0.113.7');
  assert.equal(clientAddress('::ffff:10.1.2.3', '203.0.113.7, 10.9.9.9', proxies), '203.0.113.7');
  assert.equal(clientAddress('10.1.2.3', ['198.51.100.1', '203.0.113.8'], proxies), '203.0.113.8');
  // Every hop trusted: the first. No header: the peer. Garbage: the peer, not the garbage.
  assert.equal(clientAddress('10.1.2.3', '10.0.0.1, 10.0.0.2', proxies), '10.0.0.1');
  assert.equal(clientAddress('10.1.2.3', undefined, proxies), '10.1.2.3');
  assert.equal(clientAddress('10.1.2.3', '<script>, 203.0.113.7', proxies), '203.0.113.7');
  assert.equal(clientAddress('10.1.2.3', '203.0.113.7, not-an-address', proxies), '10.1.2.3');
});
