// docs/openapi.json and docs/asyncapi.json are generated (schemas/generate-api-docs.ts) and committed:
// this fails when they are stale, when a maintained validator refuses them, and when the contract
// checks the e2e test relies on (api-doc-contract.ts) would let a wrong response or event through.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import asyncApiSpecs from '@asyncapi/specs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { API_DOCS, docsDir, renderApiDoc } from '../generate-api-docs.ts';
import { asyncApiContract, openApiContract } from '../api-doc-contract.ts';
import type { Json } from '../doc-components.ts';

const committed = (name: string): string => readFileSync(join(docsDir, name), 'utf8');
const openapi = JSON.parse(committed('openapi.json')) as Json;
const asyncapi = JSON.parse(committed('asyncapi.json')) as Json;

describe('docs/openapi.json and docs/asyncapi.json', () => {
  for (const name of Object.keys(API_DOCS) as Array<keyof typeof API_DOCS>) {
    it(`docs/${name} is what the generator writes (run \`node schemas/generate-api-docs.ts\` and commit)`, () => {
      assert.ok(committed(name) === renderApiDoc(name), `docs/${name} is stale: run \`node schemas/generate-api-docs.ts\` and commit it`);
    });
  }

  it('docs/openapi.json is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)', async () => {
    const result = await new Validator().validate(openapi);
    assert.deepEqual(result.errors ?? [], []);
    assert.equal(result.valid, true);
  });

  it('docs/asyncapi.json is valid against the official AsyncAPI 3.0.0 JSON Schema (@asyncapi/specs)', () => {
    // The bundled schema embeds the draft-07 meta-schema itself: Ajv must not add its own copy.
    const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, meta: false, validateSchema: false });
    const validate = ajv.compile(asyncApiSpecs.schemas['3.0.0']);
    assert.ok(validate(asyncapi), JSON.stringify(validate.errors?.slice(0, 5), null, 1));
  });

  // The e2e contract test (test/contract.e2e.test.ts) relies on these checks refusing what the
  // documents do not allow; here on hand-made answers and events, without I/O.
  it('the OpenAPI check accepts a documented answer and refuses an undocumented status, header or body', () => {
    const contract = openApiContract(openapi);
    const ok = {
      method: 'GET', path: '/ocpi/2.2.1/tariffs', status: 200,
      headers: { 'x-request-id': 'r', 'x-correlation-id': 'c', 'x-total-count': '0', 'x-limit': '10' },
      body: { status_code: 1000, timestamp: '2026-01-01T00:00:00.000Z', data: [] },
    };
    assert.equal(contract.template('/ocpi/2.2.1/locations/NL/ABC/LOC1/E1'), '/ocpi/2.2.1/locations/{country_code}/{party_id}/{location_id}/{evse_uid}');
    assert.equal(contract.template('/ocpi/2.2.1/commands/callback/abc'), '/ocpi/2.2.1/commands/callback/{command_id}');
    assert.deepEqual(contract.check(ok), []);
    assert.notDeepEqual(contract.check({ ...ok, status: 418 }), []);
    assert.notDeepEqual(contract.check({ ...ok, headers: { 'x-correlation-id': 'c' } }), [], 'X-Request-ID is required');
    assert.notDeepEqual(contract.check({ ...ok, body: { ...ok.body, data: [{ id: 'T1' }] } }), [], 'a tariff without its fields');
    assert.notDeepEqual(contract.check({ ...ok, body: { ...ok.body, status_code: 3001 } }), [], 'a status code the route cannot answer with');
    assert.notDeepEqual(contract.check({ ...ok, path: '/ocpi/2.2.1/cdrs', method: 'GET' }), [], 'no GET of the CDR list');
    assert.notDeepEqual(contract.check({ ...ok, path: '/ocpi/2.2.1/hubclientinfo', headers: { ...ok.headers, location: 'x' } }), [], 'an undocumented contract header');
    const refused = { ...ok, status: 405, headers: { 'x-request-id': 'r', 'x-correlation-id': 'c', allow: 'GET, HEAD, PUT, DELETE' }, body: { status_code: 2000, status_message: 'Method not allowed', timestamp: '2026-01-01T00:00:00.000Z' } };
    assert.deepEqual(contract.check({ ...refused, method: 'PATCH', path: '/ocpi/2.2.1/tariffs/NL/ABC/T1' }), []);
    assert.notDeepEqual(contract.check({ ...refused, method: 'OPTIONS', path: '/ocpi/2.2.1/tariffs/NL/ABC/T1', headers: { 'x-request-id': 'r', 'x-correlation-id': 'c' } }), [], 'a 405 names the methods served (Allow)');
    assert.notDeepEqual(contract.check({ ...refused, method: 'PUT', path: '/ocpi/2.2.1/tariffs/NL/ABC/T1' }), [], 'a PUT of a tariff is never 405');
  });

  it('the AsyncAPI check accepts a documented event and refuses a wrong topic, header or value', () => {
    const contract = asyncApiContract(asyncapi);
    const headers = { ce_specversion: '1.0', ce_id: 'e1', ce_type: 'ocpi.tariffs.tariff-deleted.v1', ce_source: 'ingress', ce_subject: 'NL/ABC/T1', ce_time: '2026-01-01T00:00:00.000Z', 'content-type': 'application/json', 'ocpi-from': 'NL/ABC' };
    const event = { topic: 'ocpi.tariffs.v1', key: 'NL/ABC/T1', headers, value: {} };
    assert.deepEqual(contract.check(event), []);
    assert.notDeepEqual(contract.check({ ...event, topic: 'ocpi.locations.v1' }), []);
    assert.notDeepEqual(contract.check({ ...event, headers: { ...headers, ce_specversion: '0.3' } }), []);
    assert.notDeepEqual(contract.check({ ...event, headers: { ...headers, 'ocpi-from': 'nl-abc' } }), []);
    assert.notDeepEqual(contract.check({ ...event, headers: { ...headers, ce_type: 'ocpi.tariffs.tariff-put.v1' } }), [], 'a tariff PUT carries a tariff');
    assert.notDeepEqual(contract.check({ ...event, key: null }), []);
  });
});
