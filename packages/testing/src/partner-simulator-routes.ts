import { createSchemaValidator, describeViolations } from '@hub/schemas';
import type express from 'express';
import type { PartnerSimulator, ReceivedKind } from './partner-simulator.ts';

// The simulated partner's OCPI endpoints (partner-simulator.ts), by module: what each answers is set
// on the simulator (receiverMode, authorizeAnswer, commandAnswer, profileAnswer...).

type Handler = (req: express.Request, res: express.Response) => void;

const validator = createSchemaValidator();

/** The 2.1.1 object each receiver takes (a command result is a CommandResponse in 2.1.1: mod_commands.md). */
const RECEIVED_SCHEMA_211: Partial<Record<ReceivedKind, string>> = {
  session: 'ocpi-2.1.1/session.json',
  cdr: 'ocpi-2.1.1/cdr.json',
  token: 'ocpi-2.1.1/token.json',
  command_result: 'ocpi-2.1.1/command_response.json',
};

const ok = (data: unknown) => ({ status_code: 1000, data, timestamp: new Date().toISOString() });

/** Every endpoint, in the order express matches them. */
export function routePartnerEndpoints(app: express.Express, sim: PartnerSimulator, modules: ReadonlyArray<{ identifier: string; role: 'SENDER' | 'RECEIVER' }>): void {
  const { receiver, checkIn211 } = receiversOf(sim);
  app.put('/ocpi/:v/sessions/:cc/:pid/:id', receiver('session'));
  routeAuthorization(app, sim);
  app.post('/ocpi/:v/cdrs', receiver('cdr'));
  // CPO tokens receiver (mod_tokens.asciidoc, Receiver interface PUT): tokens the hub delivers.
  app.put('/ocpi/:v/tokens/:cc/:pid/:uid', receiver('token'));
  // hubclientinfo receiver (mod_hub_client_info.asciidoc, Receiver interface PUT), either role.
  app.put('/ocpi/:v/hubclientinfo/:cc/:pid', receiver('client_info'));
  // eMSP: where command results arrive (the response_url it gives in commands).
  app.post('/ocpi/:v/command-results/:id', receiver('command_result'));
  routeCommands(app, sim, checkIn211);
  // eMSP: where charging profile results arrive (the response_url it gives).
  app.post('/ocpi/:v/chargingprofile-results/:id', receiver('charging_profile_result'));
  routeChargingProfiles(app, sim, receiver);
  routeVersions(app, sim, modules);
}

/** The receiver endpoints that record what the hub delivered, and the 2.1.1 schema check of their bodies. */
function receiversOf(sim: PartnerSimulator) {
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
  return { receiver, checkIn211 };
}

/** Real-time authorization, on either side: the CPO's tokens receiver and the eMSP's tokens sender. */
function routeAuthorization(app: express.Express, sim: PartnerSimulator): void {
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
}

/** The CPO's commands receiver: answers at once, then posts the result to the response_url it was given. */
function routeCommands(app: express.Express, sim: PartnerSimulator, checkIn211: (req: express.Request, schema: string | undefined) => void): void {
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
}

  // mod_charging_profiles.asciidoc. One path serves both sides, as a simulator may be either: the CPO's
  // Receiver interface (PUT SetChargingProfile, GET, DELETE; answers at once, then posts the result
  // to the response_url it was given) and the eMSP's Sender interface (PUT ActiveChargingProfile: a
  // body without response_url).
function routeChargingProfiles(app: express.Express, sim: PartnerSimulator, receiver: (kind: ReceivedKind) => Handler): void {
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
}

/** The versions and version details endpoints, and the receiver GETs of objects the simulator never stores. */
function routeVersions(app: express.Express, sim: PartnerSimulator, modules: ReadonlyArray<{ identifier: string; role: 'SENDER' | 'RECEIVER' }>): void {
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
}
