// The partner check as the account team meets it, on real Postgres and Kafka (docs/how-to/partner-check.md):
// the prober runs it on every registered platform and stores the last result (migration 026) with
// its metrics; a partner the health probe calls CONNECTED whose receiver breaks shows the failed check
// and its reason in hubctl status and party show; hubctl partner check runs it at once, one line per
// check, --json, exit status 1 on a failure and 0 once fixed.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { runHubctl, type HubctlDeps } from '@hub/hubctl';
import { hashCredentialsToken } from '@hub/ocpi';
import { aesGcmTokenCipher, registerParty } from '@hub/registry';
import { postgresDeliveryStore, postgresQuarantineStore, postgresReadModelStore, postgresRegistryStore } from '@hub/store';
import { givenTestStack, startPartnerSimulator } from '@hub/testing';
import { readProberConfig, startProber } from '../src/index.ts';

const PROBE_PATH = 'GET /ocpi/2.2.1/sessions/NL/HUB/OCPI-HUB-CHECK-NONEXISTENT';

describe('partner check: run by the prober, stored, shown, and run by hubctl', () => {
  const given = givenTestStack('partner_check_runs');

  it('shows the failing check of a CONNECTED partner with its reason, and hubctl partner check reports and clears it', async () => {
    const { stack } = given;
    const env = stack.env({ ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', PROBE_INTERVAL_MS: '600000', PARTNER_CHECK_INTERVAL_MS: '0', LOG_LEVEL: 'error' });
    const key = Buffer.from(env['HUB_SECRET_KEY'] ?? '', 'base64');
    const cipher = aesGcmTokenCipher(key);
    const store = postgresRegistryStore(stack.pool);
    const sim = await startPartnerSimulator({
      modules: [
        { identifier: 'credentials', role: 'SENDER' },
        { identifier: 'sessions', role: 'RECEIVER' },
        { identifier: 'cdrs', role: 'RECEIVER' },
      ],
    });
    const prober = await startProber(readProberConfig(env), { logStream: new Writable({ write: (_c, _e, cb) => cb() }) });
    try {
      // A registered eMSP, CONNECTED by the health probe.
      const { platformId, initialToken } = await registerParty({ store, source: 'test', actor: 'test' }, { party: { countryCode: 'DE', partyId: 'EMS', role: 'EMSP' }, name: 'Sim eMSP' });
      const saved = await store.saveCredentials(
        { platformId, presentedTokenHash: hashCredentialsToken(initialToken), newHubTokenHash: hashCredentialsToken(`hub-${platformId}`), partnerTokenSealed: cipher.seal(sim.token), versionsUrl: sim.versionsUrl, version: '2.2.1', endpoints: [], businessDetails: { name: 'Sim' }, outbox: [] },
        'register',
      );
      assert.equal(saved, true);
      await prober.probeAll();

      let out = '';
      const deps: HubctlDeps = {
        store,
        source: 'test',
        actor: 'test',
        readModels: () => ({ store: postgresReadModelStore(stack.pool), eventLog: stack.eventLog }),
        deliveries: () => ({ deliveries: postgresDeliveryStore(stack.pool), eventLog: stack.eventLog }),
        quarantine: () => postgresQuarantineStore(stack.pool),
        status: () => ({ pool: stack.pool, eventLog: stack.eventLog }),
        partnerCheck: () => ({ pool: stack.pool, openToken: (sealed) => cipher.open(sealed), options: { policy: { allowHttp: true, allowedHosts: ['127.0.0.1'] }, timeoutMs: 5000, hub: { countryCode: 'NL', partyId: 'HUB' } } }),
        interactive: false,
        publishAudit: () => Promise.resolve(true),
        out: (t: string) => void (out += t),
        err: (t: string) => void (out += t),
      };
      const hubctl = async (...argv: string[]) => {
        out = '';
        const code = await runHubctl(argv, deps);
        return { code, out };
      };
      const metrics = async () => (await fetch(`http://127.0.0.1:${prober.operatorPort}/metrics`)).text();
      const party = async () => {
        const status = JSON.parse((await hubctl('status', '--json')).out) as { parties: Array<{ party_id: string; health: string; check: string | null; check_failure: string | null }> };
        return status.parties.find((p) => p.party_id === 'EMS');
      };

      assert.deepEqual(await party(), { ...(await party()), health: 'CONNECTED', check: null }, 'not checked yet');
      assert.match((await hubctl('status')).out, /^partner checks: 0 parties passed, 0 failed, 1 not checked$/m);

      // The prober's check: passes, is stored, and has its metrics.
      const first = await prober.checkAll();
      assert.equal(first.get(platformId)?.ok, true, JSON.stringify(first.get(platformId)));
      assert.equal((await party())?.check, 'passed');
      const m1 = await metrics();
      assert.match(m1, new RegExp(`hub_partner_check_failures\\{platform="${platformId}",parties="DE/EMS/EMSP",service="prober"\\} 0`));
      assert.match(m1, new RegExp(`hub_partner_check_last_run_timestamp_seconds\\{platform="${platformId}",parties="DE/EMS/EMSP",service="prober"\\} \\d+`));

      // The sessions receiver breaks (an HTML page); versions still answer, so the probe keeps it CONNECTED.
      sim.handlers.set(PROBE_PATH, (_req, res) => void res.status(404).type('text/html').send('<html>Cannot GET</html>'));
      await prober.checkAll();
      await prober.probeAll();
      const broken = await party();
      assert.equal(broken?.health, 'CONNECTED');
      assert.equal(broken?.check, 'failed');
      assert.match(broken?.check_failure ?? '', /^probe sessions: not an OCPI envelope: /);
      assert.match(await metrics(), new RegExp(`hub_partner_check_failures\\{platform="${platformId}",parties="DE/EMS/EMSP",service="prober"\\} 1`));
      const screen = (await hubctl('status')).out;
      assert.match(screen, /^ {2}DE\/EMS +EMSP +active +CONNECTED +0 +\S+ +FAILED +2\.2\.1 +Sim eMSP$/m);
      assert.match(screen, /^ +last check \S+ failed: probe sessions: not an OCPI envelope: .* \(hubctl partner check DE\/EMS\)$/m);
      assert.match(screen, /^partner checks: 0 parties passed, 1 failed, 0 not checked$/m);
      const show = await hubctl('party', 'show', '--country', 'DE', '--party', 'EMS', '--role', 'EMSP');
      assert.match(show.out, /last check: FAILED at \S+ \(1 failed\): probe sessions: not an OCPI envelope/);
      const showJson = JSON.parse((await hubctl('party', 'show', '--country', 'DE', '--party', 'EMS', '--role', 'EMSP', '--json')).out) as { status: string; last_check: { ok: boolean; checked_by: string } };
      assert.deepEqual([showJson.status, showJson.last_check.ok, showJson.last_check.checked_by], ['CONNECTED', false, 'prober']);

      // hubctl partner check: one line per check, exit status 1, --json.
      const failing = await hubctl('partner', 'check', 'de/ems');
      assert.equal(failing.code, 1, failing.out);
      assert.match(failing.out, /^pass {2}versions +lists 2\.2\.1/m);
      assert.match(failing.out, /^FAIL {2}probe sessions +not an OCPI envelope: /m);
      assert.match(failing.out, /^pass {2}probe cdrs +HTTP 404, OCPI status_code 2003/m);
      assert.match(failing.out, /^1 of 6 checks failed \(OCPI 2\.2\.1, EMSP\)$/m);
      const asJson = await hubctl('partner', 'check', 'DE/EMS', '--json');
      const report = JSON.parse(asJson.out) as { ok: boolean; failures: number; checks: Array<{ check: string; ok: boolean; rtt_ms?: number }> };
      assert.deepEqual([asJson.code, report.ok, report.failures], [1, false, 1]);
      assert.ok(report.checks.filter((c) => c.check.startsWith('probe ')).every((c) => typeof c.rtt_ms === 'number'));

      // Fixed: the check passes, exit 0, and hubctl's result is the last one shown.
      sim.handlers.delete(PROBE_PATH);
      const fixed = await hubctl('partner', 'check', 'DE/EMS');
      assert.equal(fixed.code, 0, fixed.out);
      assert.match(fixed.out, /^all 6 checks passed \(OCPI 2\.2\.1, EMSP\)$/m);
      assert.equal((await party())?.check, 'passed');

      // The hubctl process as the account team runs it: the key, policy and hub party come from its environment.
      const main = fileURLToPath(new URL('../../../packages/hubctl/src/main.ts', import.meta.url));
      const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [main, 'partner', 'check', 'DE/EMS', '--json'], { env: { ...process.env, ...env } }, (error, stdout, stderr) =>
          resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr }),
        );
      });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.equal((JSON.parse(run.stdout) as { ok: boolean; checks: unknown[] }).ok, true);

      // Refusals: a party with no registered platform, and no party given.
      assert.equal((await hubctl('partner', 'check', 'NL/XYZ')).code, 1);
      assert.match(out, /no registered platform for NL\/XYZ/);
      assert.equal((await hubctl('partner', 'check')).code, 2);
      assert.equal(sim.requests.filter((r) => r.method !== 'GET').length, 0, 'the check sent nothing but GETs');
    } finally {
      await prober.stop();
      await sim.close();
    }
  });
  // The platform of the test above has its token sealed under another key (each stack.env() makes
  // one): it cannot be checked, and the round goes on with the others.
  it('runs by itself every PARTNER_CHECK_INTERVAL_MS on the prober holding the lease', async () => {
    const { stack } = given;
    const env = stack.env({ ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', PROBE_INTERVAL_MS: '600000', PARTNER_CHECK_INTERVAL_MS: '300', LOG_LEVEL: 'error' });
    const cipher = aesGcmTokenCipher(Buffer.from(env['HUB_SECRET_KEY'] ?? '', 'base64'));
    const store = postgresRegistryStore(stack.pool);
    const sim = await startPartnerSimulator({ modules: [{ identifier: 'tokens', role: 'RECEIVER' }] });
    const { platformId, initialToken } = await registerParty({ store, source: 'test', actor: 'test' }, { party: { countryCode: 'DE', partyId: 'CP2', role: 'CPO' }, name: 'Sim CPO' });
    await store.saveCredentials(
      { platformId, presentedTokenHash: hashCredentialsToken(initialToken), newHubTokenHash: hashCredentialsToken(`hub-${platformId}`), partnerTokenSealed: cipher.seal(sim.token), versionsUrl: sim.versionsUrl, version: '2.2.1', endpoints: [], businessDetails: { name: 'Sim' }, outbox: [] },
      'register',
    );
    const prober = await startProber(readProberConfig(env), { logStream: new Writable({ write: (_c, _e, cb) => cb() }) });
    try {
      const stored = async () => (await stack.pool.query<{ ok: boolean; first_failure: string | null; checked_by: string }>('select ok, first_failure, checked_by from partner_checks where platform_id = $1', [platformId])).rows[0];
      const deadline = Date.now() + 15_000;
      while (!(await stored()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      // A CPO without a commands receiver: the stored check says so.
      assert.deepEqual(await stored(), { ok: false, first_failure: 'module commands: no commands RECEIVER in the version details (role CPO must serve it)', checked_by: 'prober' });
    } finally {
      await prober.stop();
      await sim.close();
    }
  });
});
