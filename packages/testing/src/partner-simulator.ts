import { createSchemaValidator, describeViolations } from '@hub/schemas';
import express from 'express';
import type { Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { credentialsTokenCandidates } from '@hub/ocpi';

// A simulated partner platform: a real HTTP server on 127.0.0.1 with its own versions, version details
// and credentials endpoints, answering only to its own token, recording every request, and able to go
// down and come back on the same port.

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
}

/** What a simulated partner received from the hub's deliveries, by kind. */
export type ReceivedKind = 'session' | 'cdr' | 'command_result' | 'token' | 'client_info' | 'charging_profile_result' | 'active_charging_profile';

export interface PartnerSimulator {
  readonly baseUrl: string;
  readonly versionsUrl: string;
  /** The token the partner expects the hub to use (CREDENTIALS_TOKEN_B). */
  token: string;
  readonly requests: RecordedRequest[];
  /** Versions the partner lists; change it to simulate a partner without 2.2.1. */
  versions: string[];
  /** Extra behaviour per path (e.g. a receiver); return true when handled. */
  handlers: Map<string, (req: express.Request, res: express.Response) => void>;
  /**
   * What the CPO's token authorization receiver answers, and the eMSP's tokens sender (POST
   * {uid}/authorize): an AllowedType, or a failure mode.
   */
  authorizeAnswer: 'ALLOWED' | 'BLOCKED' | 'NOT_ALLOWED' | 'hang' | 'garbage' | 'unknown-token' | 'allowed-without-token';
  /** What the eMSP receiver endpoints (sessions PUT, CDRs POST) answer. */
  receiverMode: 'ok' | 'fail' | 'hang' | 'reject';
  /** Sessions and CDRs the receiver accepted, in arrival order. */
  /** What the CPO's commands receiver answers at once, and which result it then posts (none: never calls back). */
  commandAnswer: 'ACCEPTED' | 'REJECTED' | 'hang';
  commandResult: 'ACCEPTED' | 'REJECTED' | 'FAILED' | 'none';
  commandTimeoutSeconds: number;
  /** Commands the CPO received, with the (hub's) response_url it was given. */
  readonly commands: Array<{ command: string; body: Record<string, unknown> }>;
  /**
   * What the CPO's chargingprofiles receiver answers at once (a ChargingProfileResponseType, or never),
   * and which result it then posts to the response_url it was given (none: never calls back).
   */
  profileAnswer: 'ACCEPTED' | 'REJECTED' | 'TOO_OFTEN' | 'UNKNOWN_SESSION' | 'NOT_SUPPORTED' | 'hang';
  profileResult: 'ACCEPTED' | 'REJECTED' | 'UNKNOWN' | 'none';
  profileTimeoutSeconds: number;
  /** Charging profile requests the CPO received: PUT (SetChargingProfile), GET or DELETE, with the query and body. */
  readonly profileRequests: Array<{ method: string; sessionId: string; query: Record<string, string>; body: Record<string, unknown> | undefined; headers: Record<string, string | string[] | undefined> }>;
  /**
   * What the hub sent to the simulator's OCPI 2.1.1 endpoints that breaks the 2.1.1 schemas
   * (schemas/ocpi-2.1.1): "<path>: <violations>", one per body. A test of a 2.1.1 partner expects none.
   */
  readonly violations211: string[];
  readonly received: Array<{ kind: ReceivedKind; path: string; /** With the query string. */ url: string; body: Record<string, unknown>; headers: Record<string, string | string[] | undefined>; at: number }>;
  goDown(): Promise<void>;
  comeUp(): Promise<void>;
  close(): Promise<void>;
}

const validator = createSchemaValidator();

/** The 2.1.1 object each receiver takes (a command result is a CommandResponse in 2.1.1: mod_commands.md). */
const RECEIVED_SCHEMA_211: Partial<Record<ReceivedKind, string>> = {
  session: 'ocpi-2.1.1/session.json',
  cdr: 'ocpi-2.1.1/cdr.json',
  token: 'ocpi-2.1.1/token.json',
  command_result: 'ocpi-2.1.1/command_response.json',
};

export async function startPartnerSimulator(
  options: {
    token?: string;
    modules?: Array<{ identifier: string; role: 'SENDER' | 'RECEIVER' }>;
    /** Serve https with this key and certificate (PEM) instead of http. */
    tls?: { key: string; cert: string };
  } = {},
): Promise<PartnerSimulator> {
  const modules = options.modules ?? [{ identifier: 'credentials', role: 'SENDER' }];
  const app = express();
  app.use(express.json({ type: () => true }));
  let server: Server | undefined;
  let port = 0;
  const sim: PartnerSimulator = {
    baseUrl: '',
    versionsUrl: '',
    token: options.token ?? `partner-token-${Math.random().toString(36).slice(2)}`,
    requests: [],
    violations211: [],
    versions: ['2.1.1', '2.2.1'],
    handlers: new Map(),
    receiverMode: 'ok',
    authorizeAnswer: 'ALLOWED',
    commandAnswer: 'ACCEPTED',
    commandResult: 'ACCEPTED',
    commandTimeoutSeconds: 30,
    commands: [],
    profileAnswer: 'ACCEPTED',
    profileResult: 'ACCEPTED',
    profileTimeoutSeconds: 30,
    profileRequests: [],
    received: [],
    goDown: async () => {
      if (!server) return;
      const s = server;
      server = undefined;
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      });
    },
    comeUp: async () => {
      if (server) return;
      server = await listen(port);
    },
    close: async () => sim.goDown(),
  };
  app.use((req, res, next) => {
    sim.requests.push({ method: req.method, path: req.path, headers: req.headers, body: req.body as unknown });
    const presented = credentialsTokenCandidates(req.headers.authorization);
    if (!presented.includes(sim.token)) {
      res.status(401).json({ status_code: 2000, status_message: 'unknown token', timestamp: new Date().toISOString() });
      return;
    }
    const custom = sim.handlers.get(`${req.method} ${req.path}`);
    if (custom) return custom(req, res);
    next();
  });
  const ok = (data: unknown) => ({ status_code: 1000, data, timestamp: new Date().toISOString() });
  // Every body the hub sends to a 2.1.1 endpoint, checked against the 2.1.1 schema of what it must be.
  const checkIn211 = (req: express.Request, schema: string | undefined) => {
    if (req.params['v'] !== '2.1.1' || !schema) return;
    if (!validator.ids().includes(schema)) {
      sim.violations211.push(`${req.method} ${req.path}: no 2.1.1 object ${schema}`);
      return;
    }
    const { violations } = validator.validate(schema, req.body);
    if (violations.length > 0) sim.violations211.push(`${req.method} ${req.path}: ${describeViolations(violations)}`);
  };
  // eMSP receiver interface (interface document, Receiver endpoints), in the version of the URL (the
  // simulator speaks 2.1.1 and 2.2.1 alike: it records what it received and a test checks the form).
  const receiver = (kind: ReceivedKind) => (req: express.Request, res: express.Response) => {
    if (sim.receiverMode === 'hang') return; // never answers: the hub's timeout must fire
    if (sim.receiverMode === 'fail') {
      res.status(503).json({ status_code: 3000, status_message: 'receiver down', timestamp: new Date().toISOString() });
      return;
    }
    if (sim.receiverMode === 'reject') {
      res.json({ status_code: 2001, status_message: 'rejected', timestamp: new Date().toISOString() });
      return;
    }
    checkIn211(req, RECEIVED_SCHEMA_211[kind]);
    sim.received.push({ kind, path: req.path, url: req.originalUrl, body: req.body as Record<string, unknown>, headers: req.headers, at: performance.now() });
    if (kind === 'cdr') res.setHeader('Location', `${sim.baseUrl}/ocpi/2.2.1/cdrs/${String((req.body as { id?: string }).id)}`);
    res.json({ status_code: 1000, timestamp: new Date().toISOString() });
  };
  app.put('/ocpi/:v/sessions/:cc/:pid/:id', receiver('session'));
  /**
   * A real-time authorization answer by `authorizeAnswer`: the party asked (the CPO for the eMSP's PUT,
   * the eMSP for a CPO's POST) answers with the token it names, or hangs, garbage, or unknown token.
   */
  const authorizeAnswerer =
    (unknownTokenHttp: number, tokenOf: (req: express.Request) => Record<string, unknown>, extra: (req: express.Request) => Record<string, unknown> = () => ({})) =>
    (req: express.Request, res: express.Response) => {
      const answer = sim.authorizeAnswer;
      if (answer === 'hang') return;
      if (answer === 'garbage') {
        res.status(200).type('text/plain').send('<html>oops</html>');
        return;
      }
      if (answer === 'unknown-token') {
        res.status(unknownTokenHttp).json({ status_code: 2004, status_message: 'Unknown Token', timestamp: new Date().toISOString() });
        return;
      }
      const location = req.body && (req.body as { location_id?: string }).location_id ? { location: req.body as object } : {};
      // A partner that leaves out the Token 2.2.1 and 2.3.0 require (seen in the field).
      if (answer === 'allowed-without-token') {
        res.json(ok({ allowed: 'ALLOWED', ...location }));
        return;
      }
      // A 2.1.1 AuthorizationInfo is allowed, location and info only (mod_tokens.md 3.2.1, 2.1.1).
      if (req.params['v'] === '2.1.1') {
        res.json(ok({ allowed: answer, ...location }));
        return;
      }
      res.json(ok({ allowed: answer, token: { contract_id: 'X', issuer: 'sim', valid: true, last_updated: '2020-01-01T00:00:00Z', ...tokenOf(req) }, ...extra(req), ...location }));
    };
  // CPO receiver interface: real-time authorization (interface document, Receiver endpoints), in 2.2.1
  // and 2.3.0 (2.1.1 has none: mod_tokens.md).
  app.put(
    '/ocpi/:v/tokens/:cc/:pid/:uid/authorize',
    authorizeAnswerer(200, (req) => ({ country_code: req.params['cc'], party_id: req.params['pid'], uid: req.params['uid'], type: 'RFID', whitelist: 'ALLOWED' })),
  );
  // eMSP tokens sender interface: real-time authorization asked by a CPO (mod_tokens.asciidoc, POST;
  // an unknown token is HTTP 404 with 2004). The eMSP is the party the hub addressed (OCPI-to).
  app.post(
    '/ocpi/:v/tokens/:uid/authorize',
    authorizeAnswerer(
      404,
      (req) => ({
        country_code: String(req.headers['ocpi-to-country-code']),
        party_id: String(req.headers['ocpi-to-party-id']),
        uid: req.params['uid'],
        type: typeof req.query['type'] === 'string' ? req.query['type'] : 'RFID',
        whitelist: 'NEVER',
      }),
      (req) => ({ authorization_reference: `sim-${String(req.params['uid'])}` }),
    ),
  );

  app.post('/ocpi/:v/cdrs', receiver('cdr'));
  // CPO tokens receiver (mod_tokens.asciidoc, Receiver interface PUT): tokens the hub delivers.
  app.put('/ocpi/:v/tokens/:cc/:pid/:uid', receiver('token'));
  // hubclientinfo receiver (mod_hub_client_info.asciidoc, Receiver interface PUT), either role.
  app.put('/ocpi/:v/hubclientinfo/:cc/:pid', receiver('client_info'));
  // eMSP: where command results arrive (the response_url it gives in commands).
  app.post('/ocpi/:v/command-results/:id', receiver('command_result'));
  // CPO commands receiver: answers at once, then posts the result to the response_url it was given.
  app.post('/ocpi/:v/commands/:command', (req, res) => {
    const body = req.body as Record<string, unknown>;
    checkIn211(req, `ocpi-2.1.1/${String(req.params.command).toLowerCase()}.json`);
    sim.commands.push({ command: String(req.params.command), body });
    if (sim.commandAnswer === 'hang') return;
    // A 2.1.1 CommandResponse has no timeout (mod_commands.md 4.2, 2.1.1); its result is one too.
    res.json(ok(req.params['v'] === '2.1.1' ? { result: sim.commandAnswer } : { result: sim.commandAnswer, timeout: sim.commandTimeoutSeconds }));
    if (sim.commandAnswer === 'ACCEPTED' && sim.commandResult !== 'none') {
      const result = sim.commandResult;
      setTimeout(() => {
        void fetch(String(body['response_url']), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ result }) }).catch(() => undefined);
      }, 20);
    }
  });
  // eMSP: where charging profile results arrive (the response_url it gives).
  app.post('/ocpi/:v/chargingprofile-results/:id', receiver('charging_profile_result'));
  // mod_charging_profiles.asciidoc. One path serves both sides, as a simulator may be either: the CPO's
  // Receiver interface (PUT SetChargingProfile, GET, DELETE; answers at once, then posts the result
  // to the response_url it was given) and the eMSP's Sender interface (PUT ActiveChargingProfile: a
  // body without response_url).
  const profileReceiver = (req: express.Request, res: express.Response) => {
    const body = req.method === 'PUT' ? (req.body as Record<string, unknown>) : undefined;
    if (req.method === 'PUT' && body && !('response_url' in body)) return receiver('active_charging_profile')(req, res);
    const query = Object.fromEntries(Object.entries(req.query).filter((e): e is [string, string] => typeof e[1] === 'string'));
    sim.profileRequests.push({ method: req.method, sessionId: String(req.params['sessionId']), query, body, headers: req.headers });
    if (sim.profileAnswer === 'hang') return;
    res.json(ok({ result: sim.profileAnswer, timeout: sim.profileTimeoutSeconds }));
    const responseUrl = body ? body['response_url'] : query['response_url'];
    if (sim.profileAnswer === 'ACCEPTED' && sim.profileResult !== 'none' && typeof responseUrl === 'string') {
      const result = sim.profileResult;
      const profile = { start_date_time: new Date().toISOString(), charging_profile: { charging_rate_unit: 'A', charging_profile_period: [{ start_period: 0, limit: 16 }] } };
      const posted = req.method === 'GET' && result === 'ACCEPTED' ? { result, profile } : { result };
      setTimeout(() => {
        void fetch(responseUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(posted) }).catch(() => undefined);
      }, 20);
    }
  };
  app.put('/ocpi/:v/chargingprofiles/:sessionId', profileReceiver);
  app.get('/ocpi/:v/chargingprofiles/:sessionId', profileReceiver);
  app.delete('/ocpi/:v/chargingprofiles/:sessionId', profileReceiver);
  // Receiver GETs of one object (mod_sessions, mod_cdrs, mod_tokens, mod_hub_client_info: Receiver
  // interface, GET): the simulator stores nothing to answer from, so every object is unknown (HTTP 404
  // with an OCPI envelope), which is what the hub's partner check probes for.
  const unknownObject = (_req: express.Request, res: express.Response) => {
    res.status(404).json({ status_code: 2003, status_message: 'unknown object', timestamp: new Date().toISOString() });
  };
  app.get(['/ocpi/:v/sessions/:cc/:pid/:id', '/ocpi/:v/cdrs/:id', '/ocpi/:v/tokens/:cc/:pid/:uid', '/ocpi/:v/hubclientinfo/:cc/:pid'], unknownObject);
  app.get('/ocpi/versions', (_req, res) => {
    res.json(ok(sim.versions.map((v) => ({ version: v, url: `${sim.baseUrl}/ocpi/${v}` }))));
  });
  app.get('/ocpi/:version', (req, res) => {
    const version = req.params.version;
    const url = (m: { identifier: string }) => `${sim.baseUrl}/ocpi/${version}/${m.identifier}`;
    // version_information_endpoint.md (2.1.1), Endpoint class: identifier and url, no role; one entry per module.
    const endpoints = version === '2.1.1'
      ? [...new Set(modules.map((m) => m.identifier))].map((identifier) => ({ identifier, url: url({ identifier }) }))
      : modules.map((m) => ({ ...m, url: url(m) }));
    res.json(ok({ version, endpoints }));
  });

  const listen = (p: number) =>
    new Promise<Server>((resolve, reject) => {
      const s: Server = options.tls ? createHttpsServer(options.tls, app).listen(p, '127.0.0.1') : app.listen(p, '127.0.0.1');
      s.once('listening', () => resolve(s));
      s.once('error', reject);
    });
  server = await listen(0);
  port = (server.address() as AddressInfo).port;
  const scheme = options.tls ? 'https' : 'http';
  Object.assign(sim, { baseUrl: `${scheme}://127.0.0.1:${port}`, versionsUrl: `${scheme}://127.0.0.1:${port}/ocpi/versions` });
  return sim;
}
