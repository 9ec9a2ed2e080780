// Which Postgres failures are the server's (retry, the partition waits) and which the record's
// (quarantine it): src/postgres-failure.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DependencyUnavailable, failureKindOf, RecordRejected } from '@hub/core';
import { postgresFailureKind, translatePostgresError } from '../src/postgres-failure.ts';

const pgError = (code: string) => Object.assign(new Error(`error ${code}`), { code });

describe('postgresFailureKind', () => {
  it('sees a server starting up, shutting down, unreachable or conflicting as a dependency failure', () => {
    for (const code of ['57P03', '57P01', '08006', '08001', '53300', '40001', '40P01', '25006', '58030']) {
      assert.equal(postgresFailureKind(pgError(code)), 'dependency', code);
    }
    for (const code of ['ECONNREFUSED', 'ECONNRESET']) assert.equal(postgresFailureKind(Object.assign(new Error('socket'), { code })), 'dependency', code);
    assert.equal(postgresFailureKind(new Error('Connection terminated unexpectedly')), 'dependency');
    assert.equal(postgresFailureKind(new Error('timeout exceeded when trying to connect')), 'dependency');
  });
  it('sees data exceptions and constraint violations as the record failing', () => {
    // 22P05 untranslatable character (\u0000 in jsonb), 22008 datetime field overflow, 23505 unique violation
    for (const code of ['22P05', '22008', '22P02', '23505', '23502']) assert.equal(postgresFailureKind(pgError(code)), 'record', code);
  });
  it('calls anything else unknown (a bug is not a reason to skip data)', () => {
    assert.equal(postgresFailureKind(pgError('42P01')), 'unknown');
    assert.equal(postgresFailureKind(new TypeError('x is undefined')), 'unknown');
    assert.equal(postgresFailureKind(undefined), 'unknown');
  });
});

describe('translatePostgresError', () => {
  it('turns dependency failures into DependencyUnavailable, contention marked as such', () => {
    const translated = translatePostgresError(pgError('57P03'));
    assert.ok(translated instanceof DependencyUnavailable);
    assert.equal(translated.dependency, 'postgres');
    assert.equal(translated.contention, false);
    for (const code of ['40001', '40P01', '55P03']) {
      const conflict = translatePostgresError(pgError(code));
      assert.ok(conflict instanceof DependencyUnavailable && conflict.contention, code);
    }
  });
  it('turns data exceptions and constraint violations into RecordRejected with their SQLSTATE', () => {
    const value = translatePostgresError(pgError('22P05'));
    assert.ok(value instanceof RecordRejected);
    assert.equal(value.reason, 'value');
    assert.equal(value.code, '22P05');
    const constraint = translatePostgresError(pgError('23505'));
    assert.ok(constraint instanceof RecordRejected);
    assert.equal(constraint.reason, 'constraint');
    assert.deepEqual([value, constraint].map(failureKindOf), ['record', 'record']);
  });
  it('leaves anything else as it is (a bug is no verdict on the data or the server)', () => {
    const bug = pgError('42P01');
    assert.equal(translatePostgresError(bug), bug);
    assert.equal(failureKindOf(bug), 'unknown');
  });
});
