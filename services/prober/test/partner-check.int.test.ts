// The partner check (docs/how-to/partner-check.md) against simulated partners, real HTTP and HTTPS
// servers on loopback, each broken in one of the ways the check reports: a version not listed, a
// required receiver missing, a receiver answering something that is not an OCPI envelope, a receiver
// URL the outbound policy refuses, and a certificate that is self-signed or for another host (the CA
// and certificates are made here with openssl). A healthy partner passes every check, and the check
// sends only GETs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkPartner, formatCheckLines, type CheckedRole, type PartnerCheckReport } from '@hub/partners';
import { startPartnerSimulator, type PartnerSimulator } from '@hub/testing';

const CPO_MODULES = [
  { identifier: 'credentials', role: 'SENDER' as const },
  { identifier: 'tokens', role: 'RECEIVER' as const },
  { identifier: 'commands', role: 'RECEIVER' as const },
];
const EMSP_MODULES = [
  { identifier: 'credentials', role: 'SENDER' as const },
  { identifier: 'sessions', role: 'RECEIVER' as const },
  { identifier: 'cdrs', role: 'RECEIVER' as const },
  { identifier: 'hubclientinfo', role: 'RECEIVER' as const },
];
const HUB = { countryCode: 'NL', partyId: 'HUB' };
const PARTY = { countryCode: 'DE', partyId: 'ABC' };
const policy = { allowHttp: true, allowedHosts: ['127.0.0.1'] };

interface Certs {
  ca: string;
  good: { key: string; cert: string };
  wrongHost: { key: string; cert: string };
  selfSigned: { key: string; cert: string };
}

/** A private CA, a certificate it signs for 127.0.0.1, one it signs for another host, and a self-signed one for 127.0.0.1. */
function makeCerts(dir: string): Certs {
  const f = (n: string) => join(dir, n);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=partner check test CA');
  const signed = (name: string, san: string, days: string) => {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', `/CN=${name}`);
    writeFileSync(f(`${name}.ext`), `subjectAltName=${san}\n`);
    ssl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f(`${name}.pem`), '-days', days, '-extfile', f(`${name}.ext`));
    return { key: readFileSync(f(`${name}.key`), 'utf8'), cert: readFileSync(f(`${name}.pem`), 'utf8') };
  };
  const good = signed('good', 'IP:127.0.0.1', '30');
  const wrongHost = signed('other', 'DNS:partner.example', '30');
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('self.key'), '-out', f('self.pem'), '-days', '30', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1');
  const selfSigned = { key: readFileSync(f('self.key'), 'utf8'), cert: readFileSync(f('self.pem'), 'utf8') };
  return { ca: readFileSync(f('ca.pem'), 'utf8'), good, wrongHost, selfSigned };
}

const failed = (r: PartnerCheckReport) => r.checks.filter((l) => !l.ok).map((l) => `${l.check}: ${l.reason}`);

describe('partner check against broken partners', () => {
  let dir: string;
  let certs: Certs;
  const sims: PartnerSimulator[] = [];
  const sim = async (options: Parameters<typeof startPartnerSimulator>[0]) => {
    const s = await startPartnerSimulator(options);
    sims.push(s);
    return s;
  };
  const check = (s: PartnerSimulator, roles: CheckedRole[], extra: { ca?: string; version?: string } = {}) =>
    checkPartner(
      { versionsUrl: s.versionsUrl, token: s.token, roles, party: PARTY, version: extra.version ?? '2.2.1' },
      { policy, timeoutMs: 5000, hub: HUB, ...(extra.ca ? { ca: extra.ca } : {}) },
    );

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'partner-check-'));
    certs = makeCerts(dir);
  });
  after(async () => {
    await Promise.all(sims.map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes a healthy CPO and a healthy eMSP, with one line per check and only GETs sent', async () => {
    const cpo = await sim({ modules: CPO_MODULES });
    const report = await check(cpo, ['CPO']);
    assert.deepEqual(failed(report), [], formatCheckLines(report));
    assert.equal(report.ok, true);
    assert.deepEqual(report.checks.map((l) => l.check), ['versions', 'version-details', 'module tokens', 'probe tokens', 'module commands', 'probe commands']);
    assert.ok(report.checks.every((l) => l.rtt_ms === undefined || l.rtt_ms >= 0));
    const emsp = await sim({ modules: EMSP_MODULES });
    const emspReport = await check(emsp, ['EMSP']);
    assert.deepEqual(failed(emspReport), [], formatCheckLines(emspReport));
    assert.deepEqual(emspReport.checks.map((l) => l.check), ['versions', 'version-details', 'module sessions', 'probe sessions', 'module cdrs', 'probe cdrs', 'module hubclientinfo', 'probe hubclientinfo']);
    for (const s of [cpo, emsp]) {
      assert.deepEqual([...new Set(s.requests.map((r) => r.method))], ['GET'], 'the check sends nothing but GETs');
      assert.equal(s.received.length + s.commands.length, 0, 'no receiver stored anything');
    }
  });

  it('reports a partner that does not list the version, or that is asked for a version the check does not know', async () => {
    const s = await sim({ modules: CPO_MODULES });
    s.versions = ['2.1.1'];
    const report = await check(s, ['CPO']);
    assert.equal(report.ok, false);
    assert.match(failed(report)[0] ?? '', /^versions: does not list 2\.2\.1 \(lists 2\.1\.1\)/);
    s.versions = ['2.2.1', '9.9'];
    const unknown = await check(s, ['CPO'], { version: '9.9' });
    assert.ok(failed(unknown).some((f) => /no module list for OCPI 9\.9/.test(f)), failed(unknown).join('\n'));
  });

  it('reports a required receiver the version details do not list', async () => {
    const s = await sim({ modules: EMSP_MODULES.filter((m) => m.identifier !== 'cdrs') });
    const report = await check(s, ['EMSP']);
    assert.deepEqual(failed(report), ['module cdrs: no cdrs RECEIVER in the version details (role EMSP must serve it)']);
  });

  it('reports a receiver whose answer is not an OCPI envelope', async () => {
    const s = await sim({ modules: EMSP_MODULES });
    s.handlers.set('GET /ocpi/2.2.1/sessions/NL/HUB/OCPI-HUB-CHECK-NONEXISTENT', (_req, res) => void res.status(404).type('text/html').send('<html>Not Found</html>'));
    s.handlers.set('GET /ocpi/2.2.1/cdrs/OCPI-HUB-CHECK-NONEXISTENT', (_req, res) => void res.status(200).json({ ok: true }));
    const report = await check(s, ['EMSP']);
    const f = failed(report);
    assert.equal(f.length, 2, f.join('\n'));
    assert.match(f[0] ?? '', /^probe sessions: not an OCPI envelope: .*HTTP 404, answer is not JSON/);
    assert.match(f[1] ?? '', /^probe cdrs: HTTP 200, not an OCPI envelope: answer has no integer status_code/);
  });

  it('reports a receiver URL the outbound policy refuses, and never calls it', async () => {
    const s = await sim({ modules: CPO_MODULES });
    s.handlers.set('GET /ocpi/2.2.1', (_req, res) =>
      void res.json({
        status_code: 1000,
        timestamp: new Date().toISOString(),
        data: {
          version: '2.2.1',
          endpoints: [
            { identifier: 'tokens', role: 'RECEIVER', url: `${s.baseUrl}/ocpi/2.2.1/tokens` },
            { identifier: 'commands', role: 'RECEIVER', url: 'http://169.254.169.254/ocpi/2.2.1/commands' },
          ],
        },
      }),
    );
    const report = await check(s, ['CPO']);
    assert.deepEqual(failed(report).map((l) => l.replace(/\(.*\)/, '(…)')), ['module commands: URL refused by the outbound policy: address 169.254.169.254 is loopback, private or link-local (…)']);
    assert.ok(!report.checks.some((l) => l.check === 'probe commands'));
    // A refused versions URL gets no call and no TLS handshake either.
    const refused = await checkPartner(
      { versionsUrl: 'https://10.255.255.1/ocpi/versions', token: 't', roles: ['CPO'], party: PARTY, version: '2.2.1' },
      { policy, timeoutMs: 5000, hub: HUB },
    );
    assert.deepEqual(refused.checks.map((l) => l.check), ['versions']);
    assert.match(refused.checks[0]?.reason ?? '', /^address 10\.255\.255\.1 is loopback, private or link-local/);
  });

  it('reports TLS: valid for the host with days left under a trusted CA; self-signed and wrong-host certificates fail', async () => {
    const good = await sim({ modules: CPO_MODULES, tls: certs.good });
    const ok = await check(good, ['CPO'], { ca: certs.ca });
    assert.deepEqual(failed(ok), [], formatCheckLines(ok));
    const tls = ok.checks.find((l) => l.check.startsWith('tls '));
    assert.ok(tls, formatCheckLines(ok));
    assert.ok(tls.days_left !== undefined && tls.days_left >= 28 && tls.days_left <= 30, `days left: ${String(tls.days_left)}`);
    assert.match(tls.reason, /^certificate valid for 127\.0\.0\.1, \d+ days left$/);

    const selfSigned = await sim({ modules: CPO_MODULES, tls: certs.selfSigned });
    const bad = await check(selfSigned, ['CPO'], { ca: certs.ca });
    assert.equal(bad.ok, false);
    assert.match(bad.checks.find((l) => l.check.startsWith('tls '))?.reason ?? '', /^certificate not trusted: .*SELF_SIGNED/);

    const wrongHost = await sim({ modules: CPO_MODULES, tls: certs.wrongHost });
    const other = await check(wrongHost, ['CPO'], { ca: certs.ca });
    assert.equal(other.ok, false);
    const line = other.checks.find((l) => l.check.startsWith('tls '));
    assert.equal(line?.ok, false);
    assert.match(line?.reason ?? '', /^certificate is not valid for 127\.0\.0\.1 \(it is for DNS:partner\.example\)$/);
  });
});
