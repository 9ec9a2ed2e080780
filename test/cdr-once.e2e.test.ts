// Each CDR once in ocpi.cdrs.v1 (docs/decisions/0003-each-cdr-once.md), end to end: a real ingress
// process, Kafka and Postgres. A CPO retries a CDR whose earlier append landed but was not answered
// (the receipt still pending, as after an append timeout or a broker killed before it answered): the
// retry finds the CDR in its partition and appends nothing; a retry while the earlier append may still
// be in flight is answered 503; a CDR whose append did not land is appended by the retry. Every
// record carries the hub's URI as ce_source (README, The CDR topic).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { topics } from '@hub/events';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, onboard, readTopic, ocpiExample, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;
const SETTLE_SECONDS = 6;

/** The content hash the ingress computes: sha256 of the canonical JSON (sorted keys). */
function hashOf(body: unknown): string {
  const canonical = (v: unknown): string =>
    Array.isArray(v)
      ? `[${v.map(canonical).join(',')}]`
      : v && typeof v === 'object'
        ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Json)[k])}`).join(',')}}`
        : JSON.stringify(v);
  return createHash('sha256').update(canonical(body)).digest('hex');
}

describe('each CDR once in the stream: a CPO retry of a CDR whose append may have landed', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let hub: string;
  let cpo: OnboardedPlatform;

  const cdr = (id: string): Json => {
    const c = ocpiExample('cdr_example.json');
    return { ...c, country_code: 'NL', party_id: 'STK', id, cdr_token: { ...(c['cdr_token'] as Json), country_code: 'DE', party_id: 'TNM' } };
  };
  const postCdr = (body: Json) => call(hub, 'POST', '/ocpi/2.2.1/cdrs', { token: cpo.token, body });
  /** The receipt as an append whose answer was lost leaves it: pending, its append begun `agoSeconds` ago. */
  const answerLost = (id: string, agoSeconds: number) =>
    stack.pool.query(`update cdrs set state = 'pending', appended_at = null, append_started_at = now() - ($2 * interval '1 second') where party_id = 'STK' and id = $1`, [id, agoSeconds]);
  const stateOf = async (id: string) => (await stack.pool.query<{ state: string }>(`select state from cdrs where party_id = 'STK' and id = $1`, [id])).rows[0]?.state;
  /** The records of ocpi.cdrs.v1 for one CDR id (read to the end as it is now). */
  const recordsOf = async (id: string, atLeast: number) => {
    const all = await readTopic(stack, topics.cdrs, (records) => records.filter((r) => (JSON.parse(r.value) as Json)['id'] === id).length > atLeast, 4_000);
    return all.filter((r) => (JSON.parse(r.value) as Json)['id'] === id);
  };

  before(async () => {
    stack = await createTestStack('cdr_once');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    const env = stack.env({ HUB_PORT: String(port), HUB_PUBLIC_URL: hub, ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', APPEND_TIMEOUT_MS: '5000', CDR_RELAY_AFTER_SECONDS: String(SETTLE_SECONDS) });
    ingress = await startService('ingress', env, /ingress listening/);
    cpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'STK' }]);
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), cpo?.partner.close()]);
    await stack?.cleanup();
  });

  it('a retry after an append that landed unanswered is acknowledged and appends nothing: the CDR once', async () => {
    assert.equal((await postCdr(cdr('C-LANDED'))).body.status_code, 1000);
    await answerLost('C-LANDED', 3600);
    const retry = await postCdr(cdr('C-LANDED'));
    assert.equal(retry.body.status_code, 1000, retry.text);
    assert.equal(await stateOf('C-LANDED'), 'appended');
    const records = await recordsOf('C-LANDED', 1);
    assert.equal(records.length, 1, `C-LANDED in ocpi.cdrs.v1 ${records.length} times`);
    assert.equal(records[0]?.headers['ce_source'], hub, "ce_source is the hub's public URL");
  });

  it('a retry while the earlier append may still land is answered 503 with Retry-After; once it settled, acknowledged: the CDR once', async () => {
    assert.equal((await postCdr(cdr('C-INFLIGHT'))).body.status_code, 1000);
    await answerLost('C-INFLIGHT', 0);
    const early = await postCdr(cdr('C-INFLIGHT'));
    assert.equal(early.status, 503, early.text);
    assert.equal(early.body.status_code, 3000);
    assert.equal(early.headers['retry-after'], String(SETTLE_SECONDS));
    await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000 + 200));
    const later = await postCdr(cdr('C-INFLIGHT'));
    assert.equal(later.body.status_code, 1000, later.text);
    const records = await recordsOf('C-INFLIGHT', 1);
    assert.equal(records.length, 1, `C-INFLIGHT in ocpi.cdrs.v1 ${records.length} times`);
  });

  it('a retry of a CDR whose append did not land appends it', async () => {
    const body = cdr('C-NOT-LANDED');
    // Received, its append failed before reaching Kafka, the CPO told to retry.
    await stack.pool.query(
      `insert into cdrs (country_code, party_id, id, content_hash, document, state, append_started_at) values ('NL', 'STK', 'C-NOT-LANDED', $1, $2, 'pending', now() - interval '1 hour')`,
      [hashOf(body), JSON.stringify(body)],
    );
    const retry = await postCdr(body);
    assert.equal(retry.body.status_code, 1000, retry.text);
    assert.equal(await stateOf('C-NOT-LANDED'), 'appended');
    const records = await recordsOf('C-NOT-LANDED', 1);
    assert.equal(records.length, 1, `C-NOT-LANDED in ocpi.cdrs.v1 ${records.length} times`);
  });
});
