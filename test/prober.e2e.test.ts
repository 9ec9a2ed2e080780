// The prober end to end: partner health with hysteresis (docs/decisions/0005-partner-health-hysteresis.md): the
// real prober probes a real partner server that fails every other probe, and the partner stays
// CONNECTED with no health change recorded (so no ClientInfo goes out); failing every probe, it goes
// OFFLINE only after PROBE_OFFLINE_AFTER probes in a row, and back after PROBE_ONLINE_AFTER good ones.
// The same prober prunes rows past their retention (docs/decisions/0006-retention.md).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, onboard, until, type OnboardedPlatform } from './helpers.ts';

describe('partner health with hysteresis', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let cpo: OnboardedPlatform;
  let probes = 0;
  let failing: (n: number) => boolean = () => false;

  before(async () => {
    stack = await createTestStack('partner_health');
    const port = await freePort();
    const env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', PROBE_INTERVAL_MS: '200', PROBE_TIMEOUT_MS: '1000', PROBE_OFFLINE_AFTER: '3', PROBE_ONLINE_AFTER: '2', PRUNE_INTERVAL_MS: '300' });
    services = [await startService('ingress', env, /ingress listening/)];
    cpo = await onboard(`http://127.0.0.1:${port}`, env, 'Flapping CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'FLP' }]);
    // The partner's versions endpoint, probe by probe: a failed probe answers HTTP 503 without an envelope.
    cpo.partner.handlers.set('GET /ocpi/versions', (_req, res) => {
      probes++;
      if (failing(probes)) res.status(503).send('maintenance');
      else res.json({ status_code: 1000, data: [{ version: '2.2.1', url: `${cpo.partner.baseUrl}/ocpi/2.2.1` }], timestamp: new Date().toISOString() });
    });
    services.push(await startService('prober', env, /prober running/));
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), cpo?.partner.close()]);
    await stack?.cleanup();
  });

  const health = async () => (await stack.pool.query<{ status: string; consecutive_failures: number }>('select status, consecutive_failures from platform_health')).rows[0];
  const healthEvents = async () =>
    (await stack.pool.query<{ status: string }>("select event->'data'->>'status' as status from registry_outbox where event->>'type' = 'hub.registry.platform-health-changed.v1' order by id")).rows.map((r) => r.status);

  it('a partner failing every other probe stays CONNECTED, and no health change is recorded', async () => {
    await until('the first probes', () => probes >= 2, 20_000);
    failing = (n) => n % 2 === 0;
    const from = probes;
    await until('ten flapping probes', () => probes >= from + 10, 20_000);
    assert.equal((await health())?.status, 'CONNECTED');
    // CONNECTED since the credentials exchange (a good probe in itself): no change at all.
    assert.deepEqual(await healthEvents(), []);
  });

  it('failing every probe, it goes OFFLINE after three in a row, and CONNECTED again after two good ones', async () => {
    failing = () => false;
    const good = probes;
    await until('a good probe after the flapping', () => probes >= good + 1, 20_000);
    failing = () => true;
    const from = probes;
    await until('OFFLINE', async () => (await health())?.status === 'OFFLINE', 20_000);
    assert.ok(probes - from >= 3, `OFFLINE after ${probes - from} failed probes`);
    assert.ok(((await health())?.consecutive_failures ?? 0) >= 3);
    failing = () => false;
    const back = probes;
    await until('CONNECTED again', async () => (await health())?.status === 'CONNECTED', 20_000);
    assert.ok(probes - back >= 2, `CONNECTED after ${probes - back} good probes`);
    assert.deepEqual(await healthEvents(), ['OFFLINE', 'CONNECTED']);
  });

  it('the active prober prunes a delivered CDR older than its retention and keeps a recent one', async () => {
    await stack.pool.query(
      `insert into deliveries (kind, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id, source_partition, source_offset, payload, event_time, state, delivered_at)
       values ('cdr', 'NL', 'EMS', 'NL', 'FLP', 'CDR-OLD', 0, 0, '{}', now(), 'delivered', now() - interval '31 days'),
              ('cdr', 'NL', 'EMS', 'NL', 'FLP', 'CDR-NEW', 0, 1, '{}', now(), 'delivered', now() - interval '1 day')`,
    );
    await until('the old CDR row pruned', async () => (await stack.pool.query("select 1 from deliveries where object_id = 'CDR-OLD'")).rowCount === 0, 20_000);
    assert.equal((await stack.pool.query("select 1 from deliveries where object_id = 'CDR-NEW'")).rowCount, 1);
  });
});
