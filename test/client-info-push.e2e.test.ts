// ClientInfo push and token re-send end to end: real ingress, projector and
// dispatcher processes, real Kafka and Postgres, partners as HTTP servers. Contract: "ClientInfo
// reaches the routed parties when a party is suspended" (mod_hub_client_info.asciidoc, Push model);
// a CPO that gets a new routing rule receives the eMSP's current tokens.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newEvent, registryEventTypes, tokenEventTypes, topics } from '@hub/events';
import { objectKey, pathSubject, tokenObjectId } from '@hub/modules';
import { createTestStack, startService, type PartnerSimulator, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, ocpiExample, onboard, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;

describe('ClientInfo push and token re-send', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform; // NL/CPS, suspended in the test
  let routedEmsp: OnboardedPlatform; // DE/EMR: routed, hubclientinfo receiver
  let bareEmsp: OnboardedPlatform; // DE/EMN: routed, no hubclientinfo receiver
  let unroutedEmsp: OnboardedPlatform; // FR/UNR: hubclientinfo receiver, no rule
  let tokenCpo: OnboardedPlatform; // BE/TKC: tokens receiver, routed to DE/EMR in the test
  const clientInfoModules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'hubclientinfo', role: 'RECEIVER' as const }];

  /** Answers 1000 to PUTs on a path (the simulator records every request it gets). */
  const accept = (partner: PartnerSimulator, path: string) =>
    partner.handlers.set(`PUT ${path}`, (_req, res) => {
      res.json({ status_code: 1000, timestamp: new Date().toISOString() });
    });
  const puts = (partner: PartnerSimulator, prefix: string) => partner.requests.filter((r) => r.method === 'PUT' && r.path.startsWith(prefix));
  const ok = async (args: string[]) => {
    const out = await hubctl(env, args);
    assert.equal(out.code, 0, `hubctl ${args.join(' ')}: ${out.stderr}`);
  };

  before(async () => {
    stack = await createTestStack('client_info_push');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_RETRY_SCHEDULE_MS: '100,200,300,400,500', DELIVERY_TIMEOUT_MS: '1000' });
    services = await Promise.all([
      startService('ingress', env, /ingress listening/),
      startService('projector', env, /projector running/, 60_000),
      startService('dispatcher', env, /dispatcher running/, 60_000),
    ]);
    cpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'CPS' }], clientInfoModules);
    routedEmsp = await onboard(hub, env, 'Routed eMSP', [{ role: 'EMSP', countryCode: 'DE', partyId: 'EMR' }], clientInfoModules);
    bareEmsp = await onboard(hub, env, 'eMSP without ClientInfo receiver', [{ role: 'EMSP', countryCode: 'DE', partyId: 'EMN' }]);
    unroutedEmsp = await onboard(hub, env, 'Unrouted eMSP', [{ role: 'EMSP', countryCode: 'FR', partyId: 'UNR' }], clientInfoModules);
    tokenCpo = await onboard(hub, env, 'Token CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'TKC' }], [{ identifier: 'credentials', role: 'SENDER' }, { identifier: 'tokens', role: 'RECEIVER' }]);
    for (const p of [routedEmsp, unroutedEmsp, cpo]) accept(p.partner, '/ocpi/2.2.1/hubclientinfo/NL/CPS');
    for (const path of ['/ocpi/2.2.1/hubclientinfo/DE/EMR', '/ocpi/2.2.1/hubclientinfo/DE/EMN']) accept(cpo.partner, path);
    accept(routedEmsp.partner, '/ocpi/2.2.1/hubclientinfo/BE/TKC');
    await ok(['routing', 'enable', '--emsp', 'DE/EMR', '--cpo', 'NL/CPS']);
    await ok(['routing', 'enable', '--emsp', 'DE/EMN', '--cpo', 'NL/CPS']);
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), ...[cpo, routedEmsp, bareEmsp, unroutedEmsp, tokenCpo].map((p) => p?.partner.close())]);
    await stack?.cleanup();
  });

  const skippedCount = async () => {
    const operatorPort = /"operatorPort":(\d+)/.exec(services[2]?.logs.find((l) => l.includes('dispatcher running')) ?? '')?.[1];
    const metrics = await (await fetch(`http://127.0.0.1:${operatorPort}/metrics`)).text();
    return Number(/hub_client_info_skipped_total\{reason="no_receiver",service="dispatcher"\} (\d+)/.exec(metrics)?.[1] ?? 0);
  };
  const clientInfo = (partner: PartnerSimulator, cc: string, pid: string) => puts(partner, `/ocpi/2.2.1/hubclientinfo/${cc}/${pid}`).map((r) => r.body as Json);

  it("a routing rule enabled: each party gets the other's ClientInfo; a party without a receiver is skipped", async () => {
    await until('the CPO ClientInfo at the routed eMSP', () => clientInfo(routedEmsp.partner, 'NL', 'CPS').length > 0);
    await until('both eMSPs ClientInfo at the CPO', () => clientInfo(cpo.partner, 'DE', 'EMR').length > 0 && clientInfo(cpo.partner, 'DE', 'EMN').length > 0);
    assert.deepEqual({ ...clientInfo(routedEmsp.partner, 'NL', 'CPS')[0], last_updated: undefined }, { country_code: 'NL', party_id: 'CPS', role: 'CPO', status: 'CONNECTED', last_updated: undefined });
    assert.deepEqual({ ...clientInfo(cpo.partner, 'DE', 'EMN')[0], last_updated: undefined }, { country_code: 'DE', party_id: 'EMN', role: 'EMSP', status: 'CONNECTED', last_updated: undefined });
    // DE/EMN lists no hubclientinfo receiver: the CPO's ClientInfo is not pushed to it.
    assert.equal(await skippedCount(), 1);
    assert.equal(puts(bareEmsp.partner, '/').length, 0);
  });

  it('a suspended CPO: its routed eMSP gets PUT {hubclientinfo}/NL/CPS with SUSPENDED; one without a receiver is skipped, an unrouted one gets nothing', async () => {
    const before = Date.now();
    const atCpo = puts(cpo.partner, '/').length;
    await ok(['party', 'suspend', '--country', 'NL', '--party', 'CPS', '--role', 'CPO']);
    const put = await until('the SUSPENDED ClientInfo at the routed eMSP', () => puts(routedEmsp.partner, '/ocpi/2.2.1/hubclientinfo/NL/CPS').find((r) => (r.body as Json)['status'] === 'SUSPENDED'));
    const body = put.body as Json;
    assert.deepEqual({ ...body, last_updated: undefined }, { country_code: 'NL', party_id: 'CPS', role: 'CPO', status: 'SUSPENDED', last_updated: undefined });
    assert.ok(Date.parse(String(body['last_updated'])) >= before - 1_000, 'last_updated is the suspension time');
    assert.equal(put.headers['authorization'], `Token ${Buffer.from(routedEmsp.partner.token).toString('base64')}`);
    // transport_and_format.asciidoc, Message Routing: no routing headers for Hub Client Info.
    assert.equal(put.headers['ocpi-from-party-id'], undefined);
    assert.equal(put.headers['ocpi-to-party-id'], undefined);

    // The eMSP without a hubclientinfo receiver: no delivery row, counted as skipped.
    const rows = await until('the ClientInfo delivery recorded as delivered', async () => {
      const r = await stack.pool.query<{ emsp: string; recipient_role: string; state: string; status: string }>(
        `select emsp_country_code || '/' || emsp_party_id as emsp, recipient_role, state, payload->>'status' as status from deliveries where kind = 'client_info' and object_id = 'NL/CPS/CPO' order by emsp`,
      );
      return r.rows.every((x) => x.state === 'delivered' && x.status === 'SUSPENDED') && r.rows;
    });
    assert.deepEqual(rows, [{ emsp: 'DE/EMR', recipient_role: 'EMSP', state: 'delivered', status: 'SUSPENDED' }]);
    assert.equal(await skippedCount(), 2);
    assert.equal(puts(bareEmsp.partner, '/').length, 0);
    assert.equal(puts(unroutedEmsp.partner, '/').length, 0, 'an unrouted party gets nothing');
    assert.equal(puts(cpo.partner, '/').length, atCpo, 'the suspended party itself gets nothing');

    // Reinstated: CONNECTED again (its platform's last probe), a newer ClientInfo.
    await ok(['party', 'reinstate', '--country', 'NL', '--party', 'CPS', '--role', 'CPO']);
    await until('the CONNECTED ClientInfo after the reinstatement', () => clientInfo(routedEmsp.partner, 'NL', 'CPS').find((b) => b['status'] === 'CONNECTED' && String(b['last_updated']) > String(body['last_updated'])));
  });

  it("a CPO that gets a routing rule receives the eMSP's current tokens from the read model", async () => {
    const token = (uid: string, type: string): Json => ({ ...ocpiExample('token_example_2_full_rfid.json'), country_code: 'DE', party_id: 'EMR', uid, type, last_updated: new Date().toISOString() });
    const tokens = [token('UID-1', 'RFID'), token('uid-2', 'APP_USER')];
    await stack.eventLog.append(
      topics.tokens,
      tokens.map((t) => {
        const path = { countryCode: 'DE', partyId: 'EMR', id: tokenObjectId(String(t['uid']), String(t['type'])) };
        return newEvent({ type: tokenEventTypes.tokenPut, source: 'test', subject: pathSubject(path), key: objectKey(path), from: 'DE/EMR', data: t });
      }),
    );
    await until('the tokens in the read model', async () => Number((await stack.pool.query<{ n: number }>(`select count(*)::int as n from tokens where country_code = 'DE' and party_id = 'EMR'`)).rows[0]?.n) === 2);
    accept(tokenCpo.partner, '/ocpi/2.2.1/tokens/DE/EMR/UID-1');
    accept(tokenCpo.partner, '/ocpi/2.2.1/tokens/DE/EMR/uid-2');
    assert.equal(puts(tokenCpo.partner, '/ocpi/2.2.1/tokens/').length, 0, 'no route yet: no tokens');

    await ok(['routing', 'enable', '--emsp', 'DE/EMR', '--cpo', 'BE/TKC']);
    const received = await until('both tokens at the CPO', () => {
      const found = puts(tokenCpo.partner, '/ocpi/2.2.1/tokens/DE/EMR/');
      return found.length >= 2 && found;
    });
    assert.deepEqual(received.map((r) => r.path).sort(), ['/ocpi/2.2.1/tokens/DE/EMR/UID-1', '/ocpi/2.2.1/tokens/DE/EMR/uid-2']);
    assert.deepEqual(received.map((r) => (r.body as Json)['contract_id']), ['DE8ACC12E46L89', 'DE8ACC12E46L89']);
    // Recording a success follows the answer: wait for it.
    const types = await until('both token rows recorded as delivered', async () => {
      const r = await stack.pool.query<{ object_id: string; state: string }>(`select object_id, state from deliveries where kind = 'token' and cpo_party_id = 'TKC' order by object_id`);
      return r.rows.every((x) => x.state === 'delivered') && r.rows;
    });
    assert.deepEqual(types, [{ object_id: 'UID-1|RFID', state: 'delivered' }, { object_id: 'UID-2|APP_USER', state: 'delivered' }]);

    // Disabled and enabled again: the CPO holds these versions, so nothing is sent again.
    await ok(['routing', 'disable', '--emsp', 'DE/EMR', '--cpo', 'BE/TKC']);
    await ok(['routing', 'enable', '--emsp', 'DE/EMR', '--cpo', 'BE/TKC']);
    await ok(['party', 'suspend', '--country', 'BE', '--party', 'TKC', '--role', 'CPO']);
    await ok(['party', 'reinstate', '--country', 'BE', '--party', 'TKC', '--role', 'CPO']);
    // Nothing to wait for at the CPO: wait for the registry consumer to pass these events instead.
    await until('the registry outbox published', async () => Number((await stack.pool.query<{ n: number }>(`select count(*)::int as n from registry_outbox where published_at is null`)).rows[0]?.n) === 0);
    const head = [...(await stack.eventLog.offsetRanges(topics.registry)).values()][0]?.high ?? 0n;
    await until('the registry consumer past the reinstatement', async () => {
      const r = await stack.pool.query<{ next_offset: string }>(`select next_offset from delivery_positions where consumer_group = 'dispatcher.registry'`);
      return BigInt(r.rows[0]?.next_offset ?? 0) >= head;
    });
    assert.equal(puts(tokenCpo.partner, '/ocpi/2.2.1/tokens/').length, 2, 'the same versions are not sent again');

    // hubctl tokens resend: on demand, the same rule (here the hub lost the CPO's row of UID-1).
    await stack.pool.query(`delete from deliveries where kind = 'token' and cpo_party_id = 'TKC' and object_id = 'UID-1|RFID'`);
    const resend = await hubctl(env, ['tokens', 'resend', '--emsp', 'DE/EMR', '--cpo', 'BE/TKC']);
    assert.equal(resend.code, 0, resend.stderr);
    assert.match(resend.stdout, /2 token\(s\) of DE\/EMR queued for BE\/TKC/);
    await until('UID-1 sent again', () => puts(tokenCpo.partner, '/ocpi/2.2.1/tokens/DE/EMR/UID-1').length === 2);
    assert.equal(puts(tokenCpo.partner, '/ocpi/2.2.1/tokens/DE/EMR/uid-2').length, 1, 'the version the CPO holds is not sent again');
    const unrouted = await hubctl(env, ['tokens', 'resend', '--emsp', 'DE/EMR', '--cpo', 'FR/UNR']);
    assert.equal(unrouted.code, 1);
    assert.match(unrouted.stderr, /no active route from DE\/EMR \(eMSP\) to FR\/UNR \(CPO\)/);
  });
  it('a token pushed while the projector lags still reaches a CPO routed in that window (the re-send waits for the read model)', async () => {
    const lagCpo = await onboard(hub, env, 'Lag CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'LAG' }], [{ identifier: 'credentials', role: 'SENDER' }, { identifier: 'tokens', role: 'RECEIVER' }]);
    try {
      const projector = services[1] as ServiceProcess;
      await projector.stop();
      const late = { ...ocpiExample('token_example_2_full_rfid.json'), country_code: 'DE', party_id: 'EMR', uid: 'UID-LAG', type: 'RFID', last_updated: new Date().toISOString() };
      const path = { countryCode: 'DE', partyId: 'EMR', id: tokenObjectId('UID-LAG', 'RFID') };
      accept(tokenCpo.partner, '/ocpi/2.2.1/tokens/DE/EMR/UID-LAG');
      await stack.eventLog.append(topics.tokens, [newEvent({ type: tokenEventTypes.tokenPut, source: 'test', subject: pathSubject(path), key: objectKey(path), from: 'DE/EMR', data: late })]);
      // The dispatcher fanned it out to the CPOs routed then (TKC), not to LAG, which has no rule yet.
      await until('the late token at the routed CPO', () => puts(tokenCpo.partner, '/ocpi/2.2.1/tokens/DE/EMR/UID-LAG').length > 0);
      await ok(['routing', 'enable', '--emsp', 'DE/EMR', '--cpo', 'BE/LAG']);
      await new Promise((r) => setTimeout(r, 2_000)); // the re-send is waiting for the projector
      services[1] = await startService('projector', env, /projector running/, 60_000);
      const received = await until('every token of DE/EMR at the CPO routed while the projector lagged', () => {
        const uids = new Set(lagCpo.partner.received.filter((r) => r.kind === 'token').map((r) => String(r.body['uid'])));
        return uids.size >= 3 && uids;
      }, 60_000);
      assert.deepEqual([...received].sort(), ['UID-1', 'UID-LAG', 'uid-2']);
    } finally {
      await lagCpo.partner.close();
    }
  });

  it('a registry event without what its type promises is quarantined by the registry group, and the next one is applied', async () => {
    await stack.eventLog.append(topics.registry, [newEvent({ type: registryEventTypes.partySuspended, source: 'test', subject: 'NL/CPS/CPO', key: 'NL/CPS/CPO', data: { country_code: 'NL' } })]);
    await ok(['party', 'suspend', '--country', 'NL', '--party', 'CPS', '--role', 'CPO']);
    const quarantined = await until('the record quarantined', async () => {
      const r = await stack.pool.query<{ ce_type: string; failure_kind: string }>(`select ce_type, failure_kind from consumer_quarantine where consumer_group = 'dispatcher.registry'`);
      return r.rows.length > 0 && r.rows;
    });
    assert.deepEqual(quarantined, [{ ce_type: registryEventTypes.partySuspended, failure_kind: 'undecodable' }]);
    await until('the suspension after it pushed', () => puts(routedEmsp.partner, '/ocpi/2.2.1/hubclientinfo/NL/CPS').filter((r) => (r.body as Json)['status'] === 'SUSPENDED').length === 2);
  });

  it("a registry consumer with no stored position starts at the registry's end: no replay of past ClientInfo or token re-sends", async () => {
    // A dispatcher of another group: as a first deploy of the registry consumer onto a hub with history
    // (rule enables, a reinstatement, suspensions above), which read from the start would re-send.
    // The registry's end before it starts: registry events appended while it starts (a health change
    // of the services above on a loaded machine) may come after its position, never before it.
    const head = [...(await stack.eventLog.offsetRanges(topics.registry)).values()][0]?.high ?? 0n;
    const late = await startService('dispatcher', { ...env, DISPATCHER_GROUP_ID: 'late' }, /dispatcher running/, 60_000);
    services.push(late);
    const stored = await stack.pool.query<{ next_offset: string }>(`select next_offset from delivery_positions where consumer_group = 'late.registry'`);
    assert.equal(stored.rows.length, 1, 'one registry position stored before it consumes');
    assert.ok(BigInt(stored.rows[0]?.next_offset ?? -1) >= head, `positioned at the registry's end (${head}) or later, not at its start: ${stored.rows[0]?.next_offset}`);
    await new Promise((r) => setTimeout(r, 2_000)); // time to consume, were it reading history
    const operatorPort = /"operatorPort":(\d+)/.exec(late.logs.find((l) => l.includes('dispatcher running')) ?? '')?.[1];
    const metrics = await (await fetch(`http://127.0.0.1:${operatorPort}/metrics`)).text();
    assert.equal(Number(/hub_tokens_resent_total\{[^}]*\} (\d+)/.exec(metrics)?.[1] ?? 0), 0, 'no token re-sent from history');
    assert.equal(Number(/hub_client_info_skipped_total\{reason="no_receiver"[^}]*\} (\d+)/.exec(metrics)?.[1] ?? 0), 0, 'no ClientInfo planned from history');
  });
});
