// Session and CDR pushes (mod_sessions.asciidoc, mod_cdrs.asciidoc; interface document, Sessions,
// CDRs), in process on the in-memory ports.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { topics } from '@hub/events';
import { expectHeader, expectOcpi, type Arrange, type Expectation, type InMemoryHub } from '@hub/testing';
import { as, BASE, cpo, CPO, emsp, ingress, tokens } from './support/ingress-spec.ts';
import { cdr, session } from './support/objects.ts';

const appended = (topic: string, n: number): Expectation<InMemoryHub> => (_res, hub) => assert.equal(hub.events.appended(topic).length, n, `events appended to ${topic}`);
const sessions = (method: string, path: string, body: unknown) => as(tokens.cpo, { method, path: `/ocpi/2.2.1/sessions/${path}`, body });
const postCdr = (body: unknown) => as(tokens.cpo, { method: 'POST', path: '/ocpi/2.2.1/cdrs', body });
/** Given a session the dispatcher holds (its delivery row exists). */
const heldSession = (id: string): Arrange<InMemoryHub> => (hub) =>
  hub.deliveries.enqueue([{ kind: 'session', emsp: { countryCode: 'DE', partyId: 'EMB' }, cpo: CPO, objectId: id, partition: 0, offset: '0', payload: {}, correlationId: undefined, eventTime: '2026-01-01T10:00:00Z' }]);

describe('session pushes', () => {
  it('a PUT appends the session addressed to the eMSP its cdr_token names', () =>
    ingress
      .given(cpo())
      .when(sessions('PUT', 'NL/CPA/S1', session('S1')))
      .then(expectOcpi(200, 1000), appended(topics.sessions, 1), (_res, hub) => assert.equal(hub.events.appended(topics.sessions)[0]?.to, 'DE/EMB')));

  it('2001 when the session id in the body differs from the path', () =>
    ingress.given(cpo()).when(sessions('PUT', 'NL/CPA/S1', session('S2'))).then(expectOcpi(200, 2001, /id in the body/), appended(topics.sessions, 0)));

  it('2001 when cdr_token does not name an eMSP', () =>
    ingress
      .given(cpo())
      .when(sessions('PUT', 'NL/CPA/S1', { ...session('S1'), cdr_token: { ...session('S1').cdr_token, country_code: 'D1' } }))
      .then(expectOcpi(200, 2001)));

  it('403 for a session of a CPO the credentials do not name', () =>
    ingress.given(cpo(), emsp()).when(as(tokens.emsp, { method: 'PUT', path: '/ocpi/2.2.1/sessions/NL/CPA/S1', body: session('S1') })).then(expectOcpi(403, 2000)));

  it('404 / 2000 for a PATCH of a session the hub does not hold; accepted once it does', async () => {
    const update = { kwh: 3, last_updated: '2026-01-01T10:05:00Z' };
    await ingress.given(cpo()).when(sessions('PATCH', 'NL/CPA/S1', update)).then(expectOcpi(404, 2000, /PUT the full session first/), appended(topics.sessions, 0));
    await ingress.given(cpo(), heldSession('s1')).when(sessions('PATCH', 'NL/CPA/S1', update)).then(expectOcpi(200, 1000), appended(topics.sessions, 1));
  });

  it('2001 for a PATCH removing charging_periods (only PUT replaces them)', () =>
    ingress.given(cpo(), heldSession('S1')).when(sessions('PATCH', 'NL/CPA/S1', { charging_periods: null, last_updated: '2026-01-01T10:05:00Z' })).then(expectOcpi(200, 2001, /charging_periods/)));
});

describe('CDR posts', () => {
  it('a new CDR is appended and answered with its Location', () =>
    ingress
      .given(cpo())
      .when(postCdr(cdr('C1')))
      .then(expectOcpi(200, 1000), appended(topics.cdrs, 1), expectHeader('Location', `${BASE}/ocpi/2.2.1/cdrs/NL/CPA/C1`)));

  it('the same CDR again is acknowledged without a second event; a different one under its id is 2001', async () => {
    const first = async (hub: InMemoryHub) => {
      await hub.deliveries.receiveCdr({ ...CPO, id: 'C1', contentHash: hashOf(cdr('C1')), document: {} });
      await hub.deliveries.markCdrAppended({ ...CPO, id: 'C1' });
    };
    await ingress.given(cpo(), first).when(postCdr(cdr('C1'))).then(expectOcpi(200, 1000), appended(topics.cdrs, 0));
    await ingress.given(cpo(), first).when(postCdr(cdr('C1', 5))).then(expectOcpi(200, 2001, /CDRs are immutable/), appended(topics.cdrs, 0));
  });

  it("its event names the hub as ce_source, an absolute URI (CloudEvents: source + id unique per event)", () =>
    ingress
      .given(cpo())
      .when(postCdr(cdr('C1')))
      .then(expectOcpi(200, 1000), (_res, hub) => {
        const source = hub.events.appended(topics.cdrs)[0]?.source ?? '';
        assert.equal(source, 'urn:ocpi:NL:HUB');
        assert.ok(URL.canParse(source), `${source} is an absolute URI`);
      }));

  it('a retry of a CDR whose earlier append has not settled is answered 503 with Retry-After and appends nothing (docs/decisions/0003-each-cdr-once.md)', () => {
    // Received just now, its append failed or timed out: it may still land.
    const pending = (hub: InMemoryHub) => hub.deliveries.receiveCdr({ ...CPO, id: 'C1', contentHash: hashOf(cdr('C1')), document: {} }).then(() => undefined);
    return ingress.given(cpo(), pending).when(postCdr(cdr('C1'))).then(expectOcpi(503, 3000, /has not settled/), expectHeader('Retry-After', '60'), appended(topics.cdrs, 0));
  });

  it('403 for a CDR of a CPO the credentials do not name (the owner is in the body)', () =>
    ingress.given(cpo()).when(postCdr({ ...cdr('C1'), party_id: 'XYZ' })).then(expectOcpi(403, 2000), appended(topics.cdrs, 0)));

  it('2001 for a CDR that breaks the schema', () => ingress.given(cpo()).when(postCdr({ ...cdr('C1'), total_cost: 'much' })).then(expectOcpi(200, 2001, /total_cost/)));

  it('GET: 404 / 2000 for an unknown CDR; 403 for another CPO’s', async () => {
    await ingress.given(cpo()).when(as(tokens.cpo, { method: 'GET', path: '/ocpi/2.2.1/cdrs/NL/CPA/NOPE' })).then(expectOcpi(404, 2000));
    await ingress.given(cpo()).when(as(tokens.cpo, { method: 'GET', path: '/ocpi/2.2.1/cdrs/DE/XYZ/C1' })).then(expectOcpi(403, 2000));
  });
});

/** The content hash the CDR route computes: sha256 of the canonical JSON (sorted keys). */
function hashOf(body: object): string {
  const canonical = (v: unknown): string =>
    Array.isArray(v)
      ? `[${v.map(canonical).join(',')}]`
      : v && typeof v === 'object'
        ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`
        : JSON.stringify(v);
  return createHash('sha256').update(canonical(body)).digest('hex');
}
