import { randomUUID } from 'node:crypto';
import type express from 'express';
import type { PartyRef } from '@hub/ocpi';
import { SANDBOX_TOKEN_UIDS, sandboxToken } from './fixtures.ts';
import { envelope, OcpiPlatform, Timers, type HubAnswer, type Json, type PlatformDeps } from './platform.ts';
import { authorizationOutcome, type CommandName } from './rules.ts';

// The sandbox eMSP: receives sessions, CDRs and command results, pulls locations and tariffs, pushes
// a token per token rule, answers real-time authorization CPOs ask by the same rules, and sends a
// command or an authorization to a CPO when the sandbox-only call asks it to (sandbox.ts).

export interface SandboxEmspTiming {
  /** Between two pulls of the locations and tariffs of routed CPOs. */
  readonly pullEveryMs: number;
}

export const DEFAULT_EMSP_TIMING: SandboxEmspTiming = { pullEveryMs: 60_000 };

export class SandboxEmsp extends OcpiPlatform {
  /** The newest version of each session received, by "CC/PID/ID" of its CPO. */
  readonly sessions = new Map<string, Json>();
  readonly cdrs = new Map<string, Json>();
  /** CommandResults received at the response_urls this eMSP gave, by its own command id. */
  readonly commandResults = new Map<string, Json>();
  /** What the last pull found. */
  pulled: { locations: Json[]; tariffs: Json[]; at: string | undefined } = { locations: [], tariffs: [], at: undefined };
  private readonly timers = new Timers();
  private readonly ownTokens = new Map<string, Json>();

  private readonly timing: SandboxEmspTiming;

  constructor(deps: PlatformDeps, timing: SandboxEmspTiming) {
    super(deps, [
      { identifier: 'credentials', role: 'SENDER', path: 'credentials' },
      { identifier: 'sessions', role: 'RECEIVER', path: 'sessions' },
      { identifier: 'cdrs', role: 'RECEIVER', path: 'cdrs' },
      { identifier: 'tokens', role: 'SENDER', path: 'tokens' },
      { identifier: 'hubclientinfo', role: 'RECEIVER', path: 'hubclientinfo' },
    ]);
    this.timing = timing;
    const sessionKey = (req: express.Request) => `${String(req.params['cc'])}/${String(req.params['pid'])}/${String(req.params['id'])}`.toUpperCase();
    // mod_sessions.asciidoc, Receiver interface: the hub always delivers the full session by PUT.
    this.router.put('/ocpi/2.2.1/sessions/:cc/:pid/:id', (req, res) => {
      const session = req.body as Json;
      this.sessions.set(sessionKey(req), session);
      deps.logger.info('sandbox eMSP: session received', { cpo: `${String(req.params['cc'])}/${String(req.params['pid'])}`, session: req.params['id'], status: session['status'], kwh: session['kwh'] });
      res.json(envelope(1000));
    });
    this.router.get('/ocpi/2.2.1/sessions/:cc/:pid/:id', (req, res) => {
      const session = this.sessions.get(sessionKey(req));
      if (session) res.json(envelope(1000, session));
      else res.status(404).json(envelope(2003, undefined, 'unknown session'));
    });
    // mod_cdrs.asciidoc, Receiver interface POST: answered with the CDR's Location.
    this.router.post('/ocpi/2.2.1/cdrs', (req, res) => {
      const cdr = req.body as Json;
      const id = `${String(cdr['country_code'])}-${String(cdr['party_id'])}-${String(cdr['id'])}`;
      this.cdrs.set(id, cdr);
      deps.logger.info('sandbox eMSP: CDR received', { cpo: `${String(cdr['country_code'])}/${String(cdr['party_id'])}`, cdr: cdr['id'], total_energy: cdr['total_energy'], total_cost: cdr['total_cost'] });
      res.setHeader('Location', `${deps.baseUrl}/ocpi/2.2.1/cdrs/${encodeURIComponent(id)}`);
      res.json(envelope(1000));
    });
    this.router.get('/ocpi/2.2.1/cdrs/:id', (req, res) => {
      const cdr = this.cdrs.get(String(req.params['id']));
      if (cdr) res.json(envelope(1000, cdr));
      else res.status(404).json(envelope(2003, undefined, 'unknown CDR'));
    });
    // mod_commands.asciidoc, Sender interface: where the CommandResult of each command arrives.
    this.router.post('/ocpi/2.2.1/command-results/:id', (req, res) => {
      this.commandResults.set(String(req.params['id']), req.body as Json);
      deps.logger.info('sandbox eMSP: command result received', { command_id: req.params['id'], result: (req.body as Json)['result'] });
      res.json(envelope(1000));
    });
    // mod_tokens.asciidoc, Sender interface: the token list and real-time authorization CPOs ask.
    this.router.get('/ocpi/2.2.1/tokens', (_req, res) => {
      res.setHeader('X-Total-Count', String(this.ownTokens.size));
      res.setHeader('X-Limit', '1000');
      res.json(envelope(1000, [...this.ownTokens.values()]));
    });
    this.router.post('/ocpi/2.2.1/tokens/:uid/authorize', (req, res) => this.authorize(req, res));
  }

  /** Pushes the tokens, pulls locations and tariffs now and then. */
  async start(): Promise<void> {
    await this.pushTokens();
    this.timers.every(this.timing.pullEveryMs, () => this.pull());
    void this.pull();
  }

  stop(): void {
    this.timers.stop();
  }

  /** mod_tokens.asciidoc, Receiver interface PUT (at the hub): one token per token rule. */
  async pushTokens(): Promise<void> {
    const party = this.deps.party;
    const now = new Date().toISOString();
    for (const uid of SANDBOX_TOKEN_UIDS) {
      const token = sandboxToken(party, uid, now);
      this.ownTokens.set(uid, token);
      await this.push('token push', 'PUT', `/ocpi/2.2.1/tokens/${party.countryCode}/${party.partyId}/${uid}?type=RFID`, token);
    }
    this.deps.logger.info('sandbox eMSP: tokens pushed', { uids: SANDBOX_TOKEN_UIDS });
  }

  /** mod_locations.asciidoc and mod_tariffs.asciidoc, Sender interface GET (the hub's): every page. */
  async pull(): Promise<{ locations: number; tariffs: number }> {
    try {
      const [locations, tariffs] = [await this.pullAll('/ocpi/2.2.1/locations?limit=1000'), await this.pullAll('/ocpi/2.2.1/tariffs?limit=1000')];
      this.pulled = { locations, tariffs, at: new Date().toISOString() };
      this.deps.logger.info('sandbox eMSP: locations and tariffs pulled', { locations: locations.length, tariffs: tariffs.length });
      return { locations: locations.length, tariffs: tariffs.length };
    } catch (err) {
      this.deps.logger.warn('sandbox eMSP: pull failed', { err });
      return { locations: this.pulled.locations.length, tariffs: this.pulled.tariffs.length };
    }
  }

  /** The Token of this eMSP a command carries when the caller names none (the ALLOWED one). */
  defaultToken(): Json {
    return this.ownTokens.get(SANDBOX_TOKEN_UIDS[0]) ?? sandboxToken(this.deps.party, SANDBOX_TOKEN_UIDS[0], new Date().toISOString());
  }

  /**
   * Sends a command to a CPO through the hub (mod_commands.asciidoc, Receiver interface POST) with a
   * response_url of its own; the result is kept under the returned id.
   */
  async sendCommand(cpo: PartyRef, command: CommandName, fields: Json): Promise<{ commandId: string; answer: HubAnswer }> {
    const commandId = randomUUID();
    const body: Json = { ...fields, response_url: `${this.deps.baseUrl}/ocpi/2.2.1/command-results/${commandId}` };
    if ((command === 'START_SESSION' || command === 'RESERVE_NOW') && body['token'] === undefined) body['token'] = this.defaultToken();
    const answer = await this.callHub('POST', `/ocpi/2.2.1/commands/${command}`, { body, to: cpo });
    this.deps.logger.info('sandbox eMSP: command sent', { command, cpo: `${cpo.countryCode}/${cpo.partyId}`, command_id: commandId, status_code: answer.body?.status_code });
    return { commandId, answer };
  }

  /** Real-time authorization of one of its tokens at a CPO (interface document, Token authorization). */
  async authorizeAt(cpo: PartyRef, uid: string, location: Json | undefined): Promise<HubAnswer> {
    const party = this.deps.party;
    return this.callHub('PUT', `/ocpi/2.2.1/tokens/${party.countryCode}/${party.partyId}/${encodeURIComponent(uid)}/authorize?type=RFID`, { ...(location ? { body: location } : {}), to: cpo });
  }

  private authorize(req: express.Request, res: express.Response): void {
    const uid = String(req.params['uid']);
    const outcome = authorizationOutcome(uid);
    this.deps.logger.info('sandbox eMSP: authorization asked', { uid, outcome, cpo: `${String(req.headers['ocpi-from-country-code'])}/${String(req.headers['ocpi-from-party-id'])}` });
    if (outcome === 'NO_ANSWER') return; // the hub's AUTHORIZE_TIMEOUT_MS fires; stop() closes the socket
    const token = this.ownTokens.get(uid.toUpperCase());
    if (outcome === 'UNKNOWN_TOKEN' || !token) {
      res.status(404).json(envelope(2004, undefined, 'unknown token'));
      return;
    }
    const location = req.body && typeof (req.body as Json)['location_id'] === 'string' ? { location: req.body as Json } : {};
    res.json(envelope(1000, { allowed: outcome, token, authorization_reference: `SBX-AUTH-${randomUUID().slice(0, 8)}`, ...location }));
  }
}
