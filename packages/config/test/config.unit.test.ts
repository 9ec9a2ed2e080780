// Configuration: every variable parsed, documented defaults applied, and all problems reported at once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ConfigError,
  DEFAULT_DATABASE_URL,
  DEFAULT_KAFKA_BROKERS,
  configReader,
  readBreakerConfig,
  readCommonConfig,
  readEventSource,
  readKafkaSecurity,
  readSecretKey,
  type Env,
} from '../src/index.ts';

/** Runs done() and returns the problems it reported ([] when it did not throw). */
function problemsOf(r: { done(): void }): readonly string[] {
  try {
    r.done();
    return [];
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    return e.problems;
  }
}

describe('configReader', () => {
  it('uses the fallback when a variable is unset, empty or blank', () => {
    for (const env of [{}, { X: '' }, { X: '   ' }] as Env[]) {
      const r = configReader(env);
      assert.equal(r.string('X', 'dflt'), 'dflt');
      assert.equal(r.int('X', 7), 7);
      assert.equal(r.bool('X', true), true);
      assert.equal(r.url('X', 'https://example.com/'), 'https://example.com/');
      assert.deepEqual(r.list('X', ['a', 'b']), ['a', 'b']);
      assert.equal(r.optionalString('X'), undefined);
      assert.deepEqual(problemsOf(r), []);
    }
  });

  it('trims values', () => {
    const r = configReader({ S: '  hello ', N: ' 42 ' });
    assert.equal(r.string('S'), 'hello');
    assert.equal(r.int('N', 0), 42);
    assert.equal(r.optionalString('S'), 'hello');
  });

  it('reports a required string that is missing', () => {
    const r = configReader({});
    assert.equal(r.string('NEEDED'), '');
    assert.deepEqual(problemsOf(r), ['NEEDED is required']);
  });

  it('returns a list without a fallback as empty, and does not share the fallback array', () => {
    const fallback = ['x'];
    const r = configReader({});
    assert.deepEqual(r.list('L'), []);
    const list = r.list('L', fallback);
    list.push('y');
    assert.deepEqual(fallback, ['x']);
  });

  it('splits lists on commas, trimming entries and dropping empty ones', () => {
    const r = configReader({ L: ' a:1 , b:2,,c:3 ,' });
    assert.deepEqual(r.list('L', ['z']), ['a:1', 'b:2', 'c:3']);
  });

  describe('int', () => {
    it('parses integers within the range, bounds included', () => {
      const r = configReader({ A: '0', B: '65535', C: '-3' });
      assert.equal(r.int('A', 1, { min: 0, max: 65535 }), 0);
      assert.equal(r.int('B', 1, { min: 0, max: 65535 }), 65535);
      assert.equal(r.int('C', 1), -3);
      assert.deepEqual(problemsOf(r), []);
    });

    it('reports a value below the minimum or above the maximum and returns the fallback', () => {
      const r = configReader({ LOW: '-1', HIGH: '70000' });
      assert.equal(r.int('LOW', 5, { min: 0 }), 5);
      assert.equal(r.int('HIGH', 6, { max: 65535 }), 6);
      assert.deepEqual(problemsOf(r), ['LOW must be within [0, inf], got -1', 'HIGH must be within [-inf, 65535], got 70000']);
    });

    it('reports a value that is not an integer and returns the fallback', () => {
      const r = configReader({ A: 'abc', B: '1.5', C: '12px' });
      assert.equal(r.int('A', 1), 1);
      assert.equal(r.int('B', 2), 2);
      assert.equal(r.int('C', 3), 3);
      assert.deepEqual(problemsOf(r), ['A must be an integer, got "abc"', 'B must be an integer, got "1.5"', 'C must be an integer, got "12px"']);
    });
  });

  describe('bool', () => {
    it('reads 1/true/yes/on as true and 0/false/no/off as false, in any case', () => {
      for (const v of ['1', 'true', 'TRUE', 'Yes', 'on']) assert.equal(configReader({ B: v }).bool('B', false), true, v);
      for (const v of ['0', 'false', 'False', 'NO', 'off']) assert.equal(configReader({ B: v }).bool('B', true), false, v);
    });

    it('reports any other value and returns the fallback', () => {
      const r = configReader({ B: 'maybe' });
      assert.equal(r.bool('B', true), true);
      assert.deepEqual(problemsOf(r), ['B must be a boolean (true/false), got "maybe"']);
    });
  });

  describe('url', () => {
    it('accepts an absolute URL', () => {
      const r = configReader({ U: 'postgres://u@db:5432/hub' });
      assert.equal(r.url('U'), 'postgres://u@db:5432/hub');
      assert.deepEqual(problemsOf(r), []);
    });

    it('reports a value that is not a URL', () => {
      const r = configReader({ U: 'not a url' });
      r.url('U', 'https://fallback.example/');
      assert.deepEqual(problemsOf(r), ['U must be a URL, got "not a url"']);
    });

    it('reports a required URL that is missing', () => {
      const r = configReader({});
      assert.equal(r.url('U'), '');
      assert.deepEqual(problemsOf(r), ['U is required']);
    });
  });

  it('reports every problem together in one ConfigError from done()', () => {
    const r = configReader({ N: 'x', B: 'perhaps', U: '::', P: '99999' });
    r.string('MISSING');
    r.int('N', 1);
    r.bool('B', false);
    r.url('U');
    r.int('P', 1, { min: 0, max: 65535 });
    r.problem('custom check failed');
    assert.throws(
      () => r.done(),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.equal(e.name, 'ConfigError');
        assert.equal(e.problems.length, 6);
        assert.deepEqual(e.problems, [
          'MISSING is required',
          'N must be an integer, got "x"',
          'B must be a boolean (true/false), got "perhaps"',
          'U must be a URL, got "::"',
          'P must be within [0, 65535], got 99999',
          'custom check failed',
        ]);
        for (const p of e.problems) assert.ok(e.message.includes(p), p);
        return true;
      },
    );
  });

  it('does not throw from done() when there is no problem', () => {
    const r = configReader({ A: '1' });
    r.int('A', 0);
    assert.doesNotThrow(() => r.done());
  });
});

describe('readSecretKey', () => {
  const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7 + 1));

  it('accepts 32 bytes as 64 hex digits, in either case', () => {
    for (const hex of [bytes.toString('hex'), bytes.toString('hex').toUpperCase()]) {
      const r = configReader({ HUB_SECRET_KEY: hex });
      assert.deepEqual(readSecretKey(r), bytes);
      assert.deepEqual(problemsOf(r), []);
    }
  });

  it('accepts 32 bytes as base64', () => {
    const r = configReader({ HUB_SECRET_KEY: bytes.toString('base64') });
    assert.deepEqual(readSecretKey(r), bytes);
    assert.deepEqual(problemsOf(r), []);
  });

  it('reads the variable named by the caller', () => {
    const r = configReader({ OTHER_KEY: bytes.toString('hex') });
    assert.deepEqual(readSecretKey(r, 'OTHER_KEY'), bytes);
  });

  it('rejects keys of any other length', () => {
    for (const value of [Buffer.alloc(16, 1).toString('base64'), Buffer.alloc(33, 1).toString('base64'), 'ab'.repeat(31), 'ab'.repeat(33)]) {
      const r = configReader({ HUB_SECRET_KEY: value });
      assert.equal(readSecretKey(r).length, 0, value);
      assert.deepEqual(problemsOf(r), ['HUB_SECRET_KEY must be 32 bytes, base64 or hex encoded'], value);
    }
  });

  it('reports a missing key', () => {
    const r = configReader({});
    assert.equal(readSecretKey(r).length, 0);
    assert.deepEqual(problemsOf(r), ['HUB_SECRET_KEY is required']);
  });
});

describe('readCommonConfig', () => {
  it('applies the documented defaults', () => {
    const r = configReader({});
    assert.deepEqual(readCommonConfig(r, 9101), {
      kafkaBrokers: DEFAULT_KAFKA_BROKERS,
      kafkaSecurity: {},
      databaseUrl: DEFAULT_DATABASE_URL,
      topicPrefix: '',
      logLevel: 'info',
      operatorPort: 9101,
    });
    assert.deepEqual(DEFAULT_KAFKA_BROKERS, ['127.0.0.1:9092']);
    assert.equal(DEFAULT_DATABASE_URL, 'postgres://postgres@127.0.0.1:5432/ocpi_hub');
    assert.deepEqual(problemsOf(r), []);
  });

  it('reads every setting from the environment', () => {
    const r = configReader({
      KAFKA_BROKERS: 'k1:9092,k2:9092',
      DATABASE_URL: 'postgres://hub@db/hub',
      TOPIC_PREFIX: 'run42',
      LOG_LEVEL: 'debug',
      OPERATOR_PORT: '0',
    });
    assert.deepEqual(readCommonConfig(r, 9101), {
      kafkaBrokers: ['k1:9092', 'k2:9092'],
      kafkaSecurity: {},
      databaseUrl: 'postgres://hub@db/hub',
      topicPrefix: 'run42',
      logLevel: 'debug',
      operatorPort: 0,
    });
    assert.deepEqual(problemsOf(r), []);
  });

  it('reports an operator port outside 0-65535', () => {
    const r = configReader({ OPERATOR_PORT: '65536' });
    assert.equal(readCommonConfig(r, 9101).operatorPort, 9101);
    assert.deepEqual(problemsOf(r), ['OPERATOR_PORT must be within [0, 65535], got 65536']);
  });
});

describe('readKafkaSecurity', () => {
  const files: Record<string, string> = { '/ca.pem': 'CA PEM', '/client.pem': 'CERT PEM', '/client.key': 'KEY PEM' };
  const readFile = (path: string): string => {
    const text = files[path];
    if (text === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
    return text;
  };

  it('is empty for a plaintext cluster', () => {
    const r = configReader({});
    assert.deepEqual(readKafkaSecurity(r, readFile), {});
    assert.deepEqual(problemsOf(r), []);
  });

  it('reads TLS files and SASL credentials', () => {
    const r = configReader({
      KAFKA_SSL_CA_FILE: '/ca.pem',
      KAFKA_SSL_CERT_FILE: '/client.pem',
      KAFKA_SSL_KEY_FILE: '/client.key',
      KAFKA_SSL_SERVERNAME: 'kafka.example.com',
      KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
      KAFKA_SASL_USERNAME: 'hub',
      KAFKA_SASL_PASSWORD: 's3cret',
    });
    assert.deepEqual(readKafkaSecurity(r, readFile), {
      ssl: { ca: 'CA PEM', cert: 'CERT PEM', key: 'KEY PEM', servername: 'kafka.example.com' },
      sasl: { mechanism: 'scram-sha-512', username: 'hub', password: 's3cret' },
    });
    assert.deepEqual(problemsOf(r), []);
  });

  it('KAFKA_SSL=true alone is TLS with the system CAs', () => {
    const r = configReader({ KAFKA_SSL: 'true', KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' });
    assert.deepEqual(readKafkaSecurity(r, readFile), { ssl: {}, sasl: { mechanism: 'plain', username: 'u', password: 'p' } });
    assert.deepEqual(problemsOf(r), []);
  });

  it('reports every inconsistent or unreadable setting at once, without the password', () => {
    const r = configReader({
      KAFKA_SSL_CA_FILE: '/missing.pem',
      KAFKA_SSL_CERT_FILE: '/client.pem',
      KAFKA_SASL_MECHANISM: 'gssapi',
      KAFKA_SASL_PASSWORD: 'topsecret',
    });
    readKafkaSecurity(r, readFile);
    const problems = problemsOf(r);
    assert.deepEqual(problems, [
      'KAFKA_SSL_CA_FILE: cannot read /missing.pem (ENOENT)',
      'KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together (a client certificate needs its key)',
      'KAFKA_SASL_MECHANISM must be one of plain, scram-sha-256, scram-sha-512, got "gssapi"',
    ]);
    assert.ok(!problems.join().includes('topsecret'));
  });

  it('needs a mechanism with credentials, credentials with a mechanism, and TLS files only with TLS on', () => {
    const r1 = configReader({ KAFKA_SASL_USERNAME: 'hub', KAFKA_SASL_PASSWORD: 'x' });
    readKafkaSecurity(r1, readFile);
    assert.deepEqual(problemsOf(r1), ['KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD need KAFKA_SASL_MECHANISM (plain, scram-sha-256 or scram-sha-512)']);
    const r2 = configReader({ KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_USERNAME: 'hub' });
    readKafkaSecurity(r2, readFile);
    assert.deepEqual(problemsOf(r2), ['KAFKA_SASL_MECHANISM scram-sha-256 needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD']);
    const r3 = configReader({ KAFKA_SSL: 'false', KAFKA_SSL_CA_FILE: '/ca.pem' });
    assert.deepEqual(readKafkaSecurity(r3, readFile), {});
    assert.deepEqual(problemsOf(r3), ['KAFKA_SSL is false but KAFKA_SSL_CA_FILE is set']);
  });
});

describe('readEventSource (ce_source of the CDR events: README, The CDR topic)', () => {
  const absoluteUri = (v: string) => /^[a-z][a-z0-9+.-]*:/i.test(v) && URL.canParse(v);
  it("names the hub by its public URL when HUB_PUBLIC_URL is set: one per deployment", () => {
    const r = configReader({ HUB_PUBLIC_URL: 'https://hub.example.com/', HUB_COUNTRY_CODE: 'nl', HUB_PARTY_ID: 'hub' });
    const source = readEventSource(r);
    assert.equal(source, 'https://hub.example.com');
    assert.ok(absoluteUri(source));
    assert.deepEqual(problemsOf(r), []);
  });

  it("else by a URN of the hub's own party (country code and party id), never a bare service name", () => {
    const r = configReader({ HUB_COUNTRY_CODE: 'de', HUB_PARTY_ID: 'abc' });
    const source = readEventSource(r);
    assert.equal(source, 'urn:ocpi:DE:ABC');
    assert.ok(absoluteUri(source));
    assert.equal(readEventSource(configReader({})), 'urn:ocpi:NL:HUB', 'the defaults of HUB_COUNTRY_CODE and HUB_PARTY_ID');
  });
});

describe('readBreakerConfig', () => {
  it('has the documented defaults and reads every setting', () => {
    const defaults = configReader({});
    assert.deepEqual(readBreakerConfig(defaults), { enabled: true, failures: 5, openAfterMs: 1_500, cooldownMs: 1_000 });
    assert.deepEqual(problemsOf(defaults), []);
    const set = configReader({ BREAKER_ENABLED: 'false', BREAKER_FAILURES: '2', BREAKER_OPEN_AFTER_MS: '0', BREAKER_COOLDOWN_MS: '250' });
    assert.deepEqual(readBreakerConfig(set), { enabled: false, failures: 2, openAfterMs: 0, cooldownMs: 250 });
    assert.deepEqual(problemsOf(set), []);
  });

  it('refuses a failure count below one and a cool-down below 100 ms', () => {
    const r = configReader({ BREAKER_FAILURES: '0', BREAKER_COOLDOWN_MS: '10' });
    readBreakerConfig(r);
    assert.equal(problemsOf(r).length, 2);
  });
});
