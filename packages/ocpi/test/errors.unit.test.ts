// The error registry and its documentation (docs/reference/errors.md) stay in step, and every OCPI status code
// the hub answers with is one OCPI 2.2.1 status_codes.asciidoc defines.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { HubError, hubErrors, isHubError, type HubErrorKind } from '../src/errors.ts';

interface DocRow {
  readonly kind: string;
  readonly http: number;
  readonly ocpi: number;
  readonly meaning: string;
  readonly when: string;
}

const docUrl = new URL('../../../docs/reference/errors.md', import.meta.url);

function documentedRows(): DocRow[] {
  const rows: DocRow[] = [];
  for (const line of readFileSync(docUrl, 'utf8').split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    assert.equal(cells.length, 5, `a registry row has 5 columns: ${line}`);
    const [kind = '', http = '', ocpi = '', meaning = '', when = ''] = cells;
    const name = /^`([A-Z0-9_]+)`$/.exec(kind)?.[1];
    assert.ok(name, `kind must be in backticks: ${kind}`);
    rows.push({ kind: name, http: Number(http), ocpi: Number(ocpi), meaning, when });
  }
  return rows;
}

const registry = Object.entries(hubErrors) as Array<[HubErrorKind, (typeof hubErrors)[HubErrorKind]]>;

// status_codes.asciidoc: the codes each range defines, plus its reserved custom range (x900-x999).
const definedCodes = new Set([1000, 2000, 2001, 2002, 2003, 2004, 3000, 3001, 3002, 3003, 4000, 4001, 4002, 4003]);
const isDefinedOcpiCode = (code: number): boolean =>
  Number.isInteger(code) && (definedCodes.has(code) || [1, 2, 3, 4].some((range) => code >= range * 1000 + 900 && code <= range * 1000 + 999));

describe('docs/reference/errors.md', () => {
  const rows = documentedRows();

  it('documents every kind of the registry, and no other, once', () => {
    const kinds = rows.map((r) => r.kind);
    assert.equal(new Set(kinds).size, kinds.length, 'a kind is documented twice');
    assert.deepEqual([...kinds].sort(), Object.keys(hubErrors).sort());
  });

  it("gives each kind the registry's HTTP status and OCPI status code", () => {
    for (const row of rows) {
      const spec = hubErrors[row.kind as HubErrorKind];
      assert.ok(spec, `unknown kind ${row.kind}`);
      assert.deepEqual({ kind: row.kind, http: row.http, ocpi: row.ocpi }, { kind: row.kind, http: spec.http, ocpi: spec.ocpi });
    }
  });

  it('says for each kind what it means and when it is answered', () => {
    for (const row of rows) {
      assert.ok(row.meaning.length > 0, `${row.kind}: meaning is empty`);
      assert.ok(row.when.length > 0, `${row.kind}: when is empty`);
    }
  });
});

describe('hubErrors', () => {
  it('uses only 4-digit OCPI status codes that status_codes.asciidoc defines (1xxx-4xxx)', () => {
    for (const [kind, spec] of registry) {
      assert.match(String(spec.ocpi), /^[1-4]\d{3}$/, kind);
      assert.ok(isDefinedOcpiCode(spec.ocpi), `${kind}: ${spec.ocpi} is not a status code of OCPI 2.2.1`);
    }
  });

  it('never answers an error with an OCPI success code', () => {
    for (const [kind, spec] of registry) assert.ok(spec.ocpi >= 2000, `${kind}: ${spec.ocpi}`);
  });

  it('uses HTTP 400 only for requests unreadable at the transport layer and HTTP 401 only for authentication', () => {
    // status_codes.asciidoc: HTTP 400 when the request cannot be read at all (unparseable JSON; also a
    // path that does not percent-decode and a request Node's HTTP parser refuses).
    for (const [kind, spec] of registry) {
      if (spec.http === 400) assert.ok(['MALFORMED_JSON', 'MALFORMED_URL', 'MALFORMED_REQUEST'].includes(kind), kind);
      if (spec.http === 401) assert.match(kind, /^AUTH_/);
    }
    assert.equal(hubErrors.AUTH_MISSING.http, 401);
    assert.equal(hubErrors.AUTH_UNKNOWN_TOKEN.http, 401);
  });

  it('has valid HTTP statuses and a message for every kind', () => {
    for (const [kind, spec] of registry) {
      assert.ok(Number.isInteger(spec.http) && spec.http >= 200 && spec.http <= 599, `${kind}: ${spec.http}`);
      assert.ok(spec.message.length > 0, kind);
    }
  });
});

describe('HubError', () => {
  it('carries the registry entry of its kind and its message', () => {
    const e = new HubError('UNSUPPORTED_VERSION');
    assert.equal(e.kind, 'UNSUPPORTED_VERSION');
    assert.equal(e.spec, hubErrors.UNSUPPORTED_VERSION);
    assert.equal(e.message, hubErrors.UNSUPPORTED_VERSION.message);
    assert.equal(e.name, 'HubError');
    assert.ok(e instanceof Error);
    assert.equal(e.data, undefined);
    assert.deepEqual(e.headers, {});
  });

  it('appends the detail to the registry message', () => {
    const e = new HubError('INVALID_PARAMETERS', { detail: 'offset must be a non-negative integer' });
    assert.equal(e.message, 'Invalid or missing parameters: offset must be a non-negative integer');
  });

  it('carries data, headers and cause for the answer and the log', () => {
    const cause = new Error('broker down');
    const data = [{ path: '/roles/0/party_id', message: 'must be string' }];
    const e = new HubError('UNAVAILABLE', { data, headers: { 'Retry-After': '5' }, cause });
    assert.deepEqual(e.data, data);
    assert.deepEqual(e.headers, { 'Retry-After': '5' });
    assert.equal(e.cause, cause);
  });

  it('is recognised by isHubError, other errors are not', () => {
    assert.equal(isHubError(new HubError('INTERNAL')), true);
    assert.equal(isHubError(new Error('x')), false);
    assert.equal(isHubError({ kind: 'INTERNAL' }), false);
  });
});
