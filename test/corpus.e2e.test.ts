// The corpus: payloads written the way other platforms write them (nulls everywhere,
// empty lists, "FR", DateTimes without Z, with +00:00 or fractions, every optional field, none) for
// every inbound object, pushed through the real ingress. Valid ones are accepted, and what the hub
// keeps is strict OCPI: locations and tariffs pulled back by the eMSP validate with no null left,
// session and CDR events and forwarded command and authorization bodies carry no null. Invalid ones
// get 2001 with a pointer-first status_message, and no topic moves (end offsets compared).
// Real ingress and projector processes, real Kafka and Postgres, partners as real HTTP servers.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { topics } from '@hub/events';
import { createSchemaValidator } from '@hub/schemas';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, onboard, readTopic, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;
const corpus = new URL('./corpus/', import.meta.url);
const validator = createSchemaValidator();
const hasNull = (value: unknown): boolean => value === null || (typeof value === 'object' && Object.values(value).some((v) => hasNull(v)));

interface Case {
  readonly name: string;
  readonly body: Json;
  /** What status_message must contain (invalid cases). */
  readonly refusal?: string;
}

function cases(object: string, kind: 'valid' | 'invalid', substitute: (s: string) => string = (s) => s): Case[] {
  const dir = new URL(`${object}/${kind}/`, corpus);
  return readdirSync(dir)
    .sort()
    .map((file) => {
      const json = JSON.parse(substitute(readFileSync(new URL(file, dir), 'utf8'))) as Json;
      const name = `${object}/${kind}/${file}`;
      return kind === 'valid' ? { name, body: json } : { name, body: json['body'] as Json, refusal: String(json['refusal']) };
    });
}

/** A path segment for an id from a body: the id when usable, else a placeholder (the body is refused first). */
const seg = (v: unknown, fallback: string): string => (typeof v === 'string' && /^[\x21-\x7e]+$/.test(v) ? encodeURIComponent(v) : fallback);

describe('corpus: what real platforms send, through the real ingress', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform; // NL/CPO
  let emsp: OnboardedPlatform; // NL/EMS
  const base = JSON.parse(readFileSync(new URL('location/valid/required-only.json', corpus), 'utf8')) as Json;
  const connector = JSON.parse(readFileSync(new URL('connector/valid/required-only.json', corpus), 'utf8')) as Json;
  const baseLocation = { ...base, id: 'LOC-BASE', evses: [{ uid: 'CORPUS-EVSE', status: 'AVAILABLE', connectors: [connector], last_updated: String(base['last_updated']) }] };

  before(async () => {
    stack = await createTestStack('corpus');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', AUTHORIZE_TIMEOUT_MS: '2000' });
    services = [await startService('ingress', env, /ingress listening/), await startService('projector', env, /projector running/, 60_000)];
    cpo = await onboard(hub, env, 'Corpus CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'CPO' }], [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'commands', role: 'RECEIVER' },
      { identifier: 'tokens', role: 'RECEIVER' },
    ]);
    emsp = await onboard(hub, env, 'Corpus eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'EMS' }]);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/EMS', '--cpo', 'NL/CPO'])).code, 0);
    cpo.partner.commandResult = 'none';
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/locations/NL/CPO/LOC-BASE', { token: cpo.token, body: baseLocation })).body.status_code, 1000);
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), cpo?.partner.close(), emsp?.partner.close()]);
    await stack?.cleanup();
  });

  const offsets = async (): Promise<string> => {
    const all = await Promise.all(Object.values(topics).map(async (t) => [t, [...(await stack.eventLog.latestOffsets(t))].map(([p, o]) => `${p}:${o}`).join(',')]));
    return JSON.stringify(all);
  };

  /** Every invalid case: 2001, its precise message (a JSON pointer first), and no topic moved. */
  async function refuses(list: readonly Case[], send: (c: Case) => Promise<{ status: number; body: { status_code: number; status_message?: string } }>): Promise<void> {
    assert.ok(list.length > 0);
    const before = await offsets();
    for (const c of list) {
      const res = await send(c);
      assert.equal(res.body.status_code, 2001, `${c.name}: ${JSON.stringify(res.body)}`);
      assert.equal(res.status, 200, c.name);
      // The error registry's text, then the violations, each pointer first (packages/ocpi/src/errors.ts).
      assert.match(res.body.status_message ?? '', /^Invalid or missing parameters: \/\S*: /, `${c.name}: pointer first`);
      assert.ok((res.body.status_message ?? '').includes(c.refusal ?? '?'), `${c.name}: "${res.body.status_message}" should include "${c.refusal}"`);
    }
    assert.equal(await offsets(), before, 'nothing appended to any topic');
  }

  const put = (path: string, body: unknown) => call<Json>(hub, 'PUT', `/ocpi/2.2.1/${path}`, { token: cpo.token, body });
  const strict = (schema: string, document: unknown, name: string): void => {
    assert.equal(hasNull(document), false, `${name}: no null served`);
    assert.deepEqual(validator.validate(schema, document).violations, [], `${name}: served as valid OCPI`);
  };

  it('locations, EVSEs and connectors: valid ones accepted and pulled back by the eMSP as strict OCPI', async () => {
    const expected: Array<[string, string, Json]> = [];
    for (const c of cases('location', 'valid')) {
      const path = `locations/NL/CPO/${seg(c.body['id'], 'X')}`;
      assert.equal((await put(path, c.body)).body.status_code, 1000, c.name);
      expected.push([path, 'ocpi/location.json', validator.validate('ocpi/location.json', c.body).document as Json]);
    }
    for (const c of cases('evse', 'valid')) {
      const path = `locations/NL/CPO/LOC-BASE/${seg(c.body['uid'], 'X')}`;
      assert.equal((await put(path, c.body)).body.status_code, 1000, c.name);
      expected.push([path, 'ocpi/evse.json', validator.validate('ocpi/evse.json', c.body).document as Json]);
    }
    for (const c of cases('connector', 'valid')) {
      const path = `locations/NL/CPO/LOC-BASE/CORPUS-EVSE/${seg(c.body['id'], 'X')}`;
      assert.equal((await put(path, c.body)).body.status_code, 1000, c.name);
      expected.push([path, 'ocpi/connector.json', validator.validate('ocpi/connector.json', c.body).document as Json]);
    }
    await call(hub, 'GET', '/ocpi/2.2.1/locations/NL/CPO/LOC-BASE', { token: cpo.token }); // read-your-writes: projected
    for (const [path, schema, document] of expected) {
      const got = await call<Json>(hub, 'GET', `/ocpi/2.2.1/${path}`, { token: emsp.token });
      assert.equal(got.body.status_code, 1000, path);
      strict(schema, got.body.data, path);
      // Stored as sent (language case, DateTime forms), without the null members.
      if (!path.startsWith('locations/NL/CPO/LOC-BASE')) assert.deepEqual(got.body.data, document, path);
    }
    const list = await call<Json[]>(hub, 'GET', '/ocpi/2.2.1/locations?limit=100', { token: emsp.token });
    for (const l of list.body.data ?? []) strict('ocpi/location.json', l, `list ${String(l['id'])}`);
  });

  it('locations, EVSEs and connectors: invalid ones refused with 2001, nothing appended', async () => {
    await refuses(cases('location', 'invalid'), (c) => put(`locations/NL/CPO/${seg(c.body['id'], 'LOC-BAD')}`, c.body));
    await refuses(cases('evse', 'invalid'), (c) => put(`locations/NL/CPO/LOC-BASE/${seg(c.body['uid'], 'E-BAD')}`, c.body));
    await refuses(cases('connector', 'invalid'), (c) => put(`locations/NL/CPO/LOC-BASE/CORPUS-EVSE/${seg(c.body['id'], 'C-BAD')}`, c.body));
  });

  it('a PATCH null removes an optional field, a null for a required one is refused; empty path segments are 2001', async () => {
    const lastUpdated = '2026-11-21T10:00:00';
    assert.equal((await call(hub, 'PATCH', '/ocpi/2.2.1/locations/NL/CPO/LOC-BASE', { token: cpo.token, body: { name: 'Named', last_updated: lastUpdated } })).body.status_code, 1000);
    assert.equal((await call(hub, 'PATCH', '/ocpi/2.2.1/locations/NL/CPO/LOC-BASE', { token: cpo.token, body: { name: null, opening_times: { twentyfourseven: true, regular_hours: null }, last_updated: lastUpdated } })).body.status_code, 1000);
    const got = (await call<Json>(hub, 'GET', '/ocpi/2.2.1/locations/NL/CPO/LOC-BASE', { token: cpo.token })).body.data as Json;
    assert.equal('name' in got, false, 'name removed');
    assert.deepEqual(got['opening_times'], { twentyfourseven: true });
    strict('ocpi/location.json', got, 'patched LOC-BASE');
    await refuses(
      [
        { name: 'PATCH address: null', body: { address: null, last_updated: lastUpdated }, refusal: '/address: required field address cannot be removed (null)' },
        { name: 'PATCH last_updated: null', body: { status: 'AVAILABLE', last_updated: null }, refusal: '/last_updated: required field last_updated cannot be removed (null)' },
      ],
      (c) => call(hub, 'PATCH', `/ocpi/2.2.1/locations/NL/CPO/LOC-BASE${c.name.includes('address') ? '' : '/CORPUS-EVSE'}`, { token: cpo.token, body: c.body }),
    );
    for (const path of ['/ocpi/2.2.1/locations/NL/CPO//CORPUS-EVSE', '/ocpi/2.2.1/locations/NL/CPO/LOC-BASE//1', '/ocpi/2.2.1/tariffs/NL//T1']) {
      const res = await call(hub, 'PUT', path, { token: cpo.token, body: connector });
      assert.equal(res.body.status_code, 2001, `${path}: ${res.text}`);
      assert.match(res.body.status_message ?? '', /(location_id|evse_uid|party_id) in the path must not be empty/);
    }
  });

  it('tariffs: valid ones pulled back as strict OCPI, invalid ones refused', async () => {
    const expected = new Map<string, Json>();
    for (const c of cases('tariff', 'valid')) {
      assert.equal((await put(`tariffs/NL/CPO/${seg(c.body['id'], 'X')}`, c.body)).body.status_code, 1000, c.name);
      expected.set(String(c.body['id']), validator.validate('ocpi/tariff.json', c.body).document as Json);
    }
    await call(hub, 'GET', `/ocpi/2.2.1/tariffs/NL/CPO/${[...expected.keys()][0] ?? ''}`, { token: cpo.token });
    for (const [id, document] of expected) {
      const got = await call<Json>(hub, 'GET', `/ocpi/2.2.1/tariffs/NL/CPO/${id}`, { token: emsp.token });
      strict('ocpi/tariff.json', got.body.data, id);
      assert.deepEqual(got.body.data, document, id);
    }
    await refuses(cases('tariff', 'invalid'), (c) => put(`tariffs/NL/CPO/${seg(c.body['id'], 'T-BAD')}`, c.body));
  });

  it('sessions and CDRs: valid ones accepted and on Kafka without a null, invalid ones refused', async () => {
    const sessions = cases('session', 'valid');
    for (const c of sessions) assert.equal((await put(`sessions/NL/CPO/${seg(c.body['id'], 'X')}`, c.body)).body.status_code, 1000, c.name);
    const cdrs = cases('cdr', 'valid');
    for (const c of cdrs) assert.equal((await call(hub, 'POST', '/ocpi/2.2.1/cdrs', { token: cpo.token, body: c.body })).body.status_code, 1000, c.name);
    for (const [topic, count] of [[topics.sessions, sessions.length], [topics.cdrs, cdrs.length]] as const) {
      const records = await readTopic(stack, topic, (rs) => rs.length >= count, 15_000);
      assert.equal(records.length, count, topic);
      for (const r of records) assert.equal(hasNull(JSON.parse(r.value)), false, `${topic}: ${r.value.slice(0, 200)}`);
    }
    await refuses(cases('session', 'invalid'), (c) => put(`sessions/NL/CPO/${seg(c.body['id'], 'S-BAD')}`, c.body));
    await refuses(cases('cdr', 'invalid'), (c) => call(hub, 'POST', '/ocpi/2.2.1/cdrs', { token: cpo.token, body: c.body }));
  });

  it('commands: valid bodies forwarded to the CPO without a null, invalid ones refused and not forwarded', async () => {
    const responseUrl = `${emsp.partner.baseUrl}/ocpi/2.2.1/command-results/corpus`;
    const substitute = (s: string) => s.replaceAll('${RESPONSE_URL}', responseUrl);
    const to = { 'OCPI-to-country-code': 'NL', 'OCPI-to-party-id': 'CPO' };
    const commands = [
      ['START_SESSION', 'start_session'],
      ['STOP_SESSION', 'stop_session'],
      ['RESERVE_NOW', 'reserve_now'],
      ['CANCEL_RESERVATION', 'cancel_reservation'],
    ] as const;
    for (const [command, object] of commands) {
      for (const c of cases(object, 'valid', substitute)) {
        const res = await call<Json>(hub, 'POST', `/ocpi/2.2.1/commands/${command}`, { token: emsp.token, body: c.body, headers: to });
        assert.equal(res.body.status_code, 1000, `${c.name}: ${res.text}`);
        assert.equal(res.body.data?.['result'], 'ACCEPTED', c.name);
        const forwarded = cpo.partner.commands.at(-1);
        assert.equal(forwarded?.command, command);
        assert.equal(hasNull(forwarded?.body), false, `${c.name}: forwarded without null`);
        assert.deepEqual(validator.validate(`ocpi/${object}.json`, forwarded?.body).violations, [], c.name);
      }
    }
    const forwardedBefore = cpo.partner.commands.length;
    for (const [command, object] of commands) {
      await refuses(cases(object, 'invalid', substitute), (c) => call(hub, 'POST', `/ocpi/2.2.1/commands/${command}`, { token: emsp.token, body: c.body, headers: to }));
    }
    assert.equal(cpo.partner.commands.length, forwardedBefore, 'nothing forwarded');
    // The CPO's CommandResponse, written with nulls, reaches the eMSP without them.
    cpo.partner.handlers.set('POST /ocpi/2.2.1/commands/START_SESSION', (_req, res) => {
      res.json({ status_code: 1000, status_message: null, data: { result: 'ACCEPTED', timeout: 30, message: null }, timestamp: '2026-11-22T10:00:00' });
    });
    const [start] = cases('start_session', 'valid', substitute);
    const answered = await call<Json>(hub, 'POST', '/ocpi/2.2.1/commands/START_SESSION', { token: emsp.token, body: start?.body, headers: to });
    cpo.partner.handlers.delete('POST /ocpi/2.2.1/commands/START_SESSION');
    assert.deepEqual(answered.body.data, { result: 'ACCEPTED', timeout: 30 }, answered.text);
  });

  it('token authorization (LocationReferences): valid bodies forwarded without a null, invalid ones refused', async () => {
    const to = { 'OCPI-to-country-code': 'NL', 'OCPI-to-party-id': 'CPO' };
    const authorize = (body: Json, uid = 'TOKEN-1') => call<Json>(hub, 'PUT', `/ocpi/2.2.1/tokens/NL/EMS/${uid}/authorize`, { token: emsp.token, body, headers: to });
    for (const c of cases('location_references', 'valid')) {
      const res = await authorize(c.body);
      assert.equal(res.body.status_code, 1000, `${c.name}: ${res.text}`);
      const forwarded = cpo.partner.requests.filter((r) => r.path.endsWith('/authorize')).at(-1);
      assert.equal(hasNull(forwarded?.body), false, `${c.name}: forwarded without null`);
    }
    const forwardedBefore = cpo.partner.requests.length;
    await refuses(cases('location_references', 'invalid'), (c) => authorize(c.body));
    const empty = await call(hub, 'PUT', '/ocpi/2.2.1/tokens/NL/EMS//authorize', { token: emsp.token, headers: to });
    assert.equal(empty.body.status_code, 2001, empty.text);
    assert.match(empty.body.status_message ?? '', /token_uid in the path must not be empty/);
    assert.equal(cpo.partner.requests.length, forwardedBefore, 'nothing forwarded');
  });

  it('credentials: valid ones accepted (PUT), invalid ones refused and the registry topic unchanged', async () => {
    let token = emsp.token;
    const substitute = (s: string) => s.replaceAll('${PARTNER_TOKEN}', emsp.partner.token).replaceAll('${PARTNER_VERSIONS_URL}', emsp.partner.versionsUrl);
    for (const c of cases('credentials', 'valid', substitute)) {
      const res = await call<{ token: string }>(hub, 'PUT', '/ocpi/2.2.1/credentials', { token, body: c.body });
      assert.equal(res.body.status_code, 1000, `${c.name}: ${res.text}`);
      token = res.body.data?.token ?? '';
    }
    // The accepted PUTs' audit events reach hub.registry.v1 through the outbox, after the answer: wait
    // until it has published them, so the offsets compared below move only if a refusal appended.
    const deadline = Date.now() + 15_000;
    while ((await stack.pool.query<{ n: string }>('select count(*) as n from registry_outbox where published_at is null')).rows[0]?.n !== '0' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await refuses(cases('credentials', 'invalid', substitute), (c) => call(hub, 'PUT', '/ocpi/2.2.1/credentials', { token, body: c.body }));
  });
});
