import { randomUUID } from 'node:crypto';
import type express from 'express';
import { cdrObject, evseUids, sandboxLocations, sandboxTariff, sessionObject, type SessionState } from './fixtures.ts';
import { envelope, OcpiPlatform, Timers, type Json, type PlatformDeps } from './platform.ts';
import { authorizationOutcome, commandPlan, COMMANDS, type CommandName } from './rules.ts';

// The sandbox CPO: pushes its locations and tariff, PATCHes EVSE statuses now and then, answers
// real-time authorization and the five commands by the documented rules (rules.ts), runs a session
// PENDING -> ACTIVE -> COMPLETED after START_SESSION and STOP_SESSION and posts its CDR, and keeps
// the tokens eMSPs push (delivered to its receiver, and pulled from the hub).

export interface SandboxCpoTiming {
  /** Between two EVSE status PATCHes (one EVSE of SBX-LOC-1 goes OUTOFORDER and back). */
  readonly evseStatusEveryMs: number;
  /** Between the meter updates of an ACTIVE session (kWh grows by kwhPerTick each time). */
  readonly sessionTickMs: number;
  readonly kwhPerTick: number;
  /** A session nobody stops is stopped by the charge point after this long. */
  readonly maxSessionMs: number;
  /** Between two pulls of the tokens of routed eMSPs. */
  readonly tokenPullEveryMs: number;
  /** Delay before a command result is posted (the charge point "acting"). */
  readonly resultDelayMs: number;
  /** The timeout the CPO announces for commands whose result never comes (mod_commands.asciidoc, CommandResponse). */
  readonly silentCommandTimeoutSeconds: number;
}

export const DEFAULT_CPO_TIMING: SandboxCpoTiming = {
  evseStatusEveryMs: 60_000,
  sessionTickMs: 5_000,
  kwhPerTick: 0.5,
  maxSessionMs: 30 * 60_000,
  tokenPullEveryMs: 60_000,
  resultDelayMs: 500,
  silentCommandTimeoutSeconds: 5,
};

export class SandboxCpo extends OcpiPlatform {
  readonly sessions = new Map<string, SessionState>();
  readonly reservations = new Set<string>();
  /** Tokens of eMSPs, by "CC/PID/UID": delivered to the receiver or pulled. */
  readonly tokens = new Map<string, Json>();
  private readonly timers = new Timers();
  private locations: Json[] = [];
  private tariff: Json = {};

  private readonly timing: SandboxCpoTiming;

  constructor(deps: PlatformDeps, timing: SandboxCpoTiming) {
    super(deps, [
      { identifier: 'credentials', role: 'SENDER', path: 'credentials' },
      { identifier: 'tokens', role: 'RECEIVER', path: 'tokens' },
      { identifier: 'commands', role: 'RECEIVER', path: 'commands' },
      { identifier: 'hubclientinfo', role: 'RECEIVER', path: 'hubclientinfo' },
    ]);
    this.timing = timing;
    // mod_tokens.asciidoc, Receiver interface PUT: tokens the hub delivers from eMSPs.
    this.router.put('/ocpi/2.2.1/tokens/:cc/:pid/:uid', (req, res) => {
      const token = req.body as Json;
      this.tokens.set(`${String(req.params['cc'])}/${String(req.params['pid'])}/${String(req.params['uid'])}`.toUpperCase(), token);
      deps.logger.info('sandbox CPO: token received', { emsp: `${String(req.params['cc'])}/${String(req.params['pid'])}`, uid: req.params['uid'], valid: token['valid'] });
      res.json(envelope(1000));
    });
    this.router.get('/ocpi/2.2.1/tokens/:cc/:pid/:uid', (req, res) => {
      const token = this.tokens.get(`${String(req.params['cc'])}/${String(req.params['pid'])}/${String(req.params['uid'])}`.toUpperCase());
      if (token) res.json(envelope(1000, token));
      else res.status(404).json(envelope(2004, undefined, 'unknown token'));
    });
    // Interface document, Receiver endpoints: real-time authorization an eMSP asks through the hub.
    this.router.put('/ocpi/2.2.1/tokens/:cc/:pid/:uid/authorize', (req, res) => this.authorize(req, res));
    this.router.post('/ocpi/2.2.1/commands/:command', (req, res) => this.command(req, res));
  }

  /** Pushes the locations and the tariff, then keeps the EVSE statuses and tokens moving. */
  async start(): Promise<void> {
    const now = new Date().toISOString();
    const party = this.deps.party;
    this.tariff = sandboxTariff(party, now);
    this.locations = sandboxLocations(party, now);
    await this.push('tariff push', 'PUT', `/ocpi/2.2.1/tariffs/${party.countryCode}/${party.partyId}/${String(this.tariff['id'])}`, this.tariff);
    for (const location of this.locations) {
      await this.push('location push', 'PUT', `/ocpi/2.2.1/locations/${party.countryCode}/${party.partyId}/${String(location['id'])}`, location);
    }
    this.deps.logger.info('sandbox CPO: locations and tariff pushed', { locations: this.locations.map((l) => l['id']), tariff: this.tariff['id'] });
    let outOfOrder = false;
    this.timers.every(this.timing.evseStatusEveryMs, async () => {
      // The second EVSE of SBX-LOC-1 alternates, unless someone charges there.
      const uid = evseUids('SBX-LOC-1')[1] ?? '';
      if ([...this.sessions.values()].some((s) => s.evseUid === uid && s.status !== 'COMPLETED')) return;
      outOfOrder = !outOfOrder;
      await this.patchEvseStatus('SBX-LOC-1', uid, outOfOrder ? 'OUTOFORDER' : 'AVAILABLE');
    });
    this.timers.every(this.timing.tokenPullEveryMs, () => this.pullTokens());
    void this.pullTokens();
  }

  stop(): void {
    this.timers.stop();
  }

  /** mod_tokens.asciidoc, Sender interface GET: every token of the eMSPs routed to this CPO. */
  async pullTokens(): Promise<number> {
    try {
      const tokens = await this.pullAll('/ocpi/2.2.1/tokens?limit=1000');
      for (const t of tokens) this.tokens.set(`${String(t['country_code'])}/${String(t['party_id'])}/${String(t['uid'])}`.toUpperCase(), t);
      return tokens.length;
    } catch (err) {
      this.deps.logger.warn('sandbox CPO: token pull failed', { err });
      return 0;
    }
  }

  private async patchEvseStatus(locationId: string, evseUid: string, status: string): Promise<void> {
    const party = this.deps.party;
    await this.push('EVSE status PATCH', 'PATCH', `/ocpi/2.2.1/locations/${party.countryCode}/${party.partyId}/${locationId}/${evseUid}`, { status, last_updated: new Date().toISOString() });
  }

  private authorize(req: express.Request, res: express.Response): void {
    const uid = String(req.params['uid']);
    const outcome = authorizationOutcome(uid);
    this.deps.logger.info('sandbox CPO: authorization asked', { uid, outcome });
    if (outcome === 'NO_ANSWER') return; // the hub's AUTHORIZE_TIMEOUT_MS fires; stop() closes the socket
    if (outcome === 'UNKNOWN_TOKEN') {
      res.status(404).json(envelope(2004, undefined, 'unknown token'));
      return;
    }
    const token = {
      country_code: String(req.params['cc']),
      party_id: String(req.params['pid']),
      uid,
      type: typeof req.query['type'] === 'string' ? req.query['type'] : 'RFID',
      contract_id: uid,
      issuer: 'sandbox',
      valid: outcome === 'ALLOWED',
      whitelist: 'NEVER',
      last_updated: new Date().toISOString(),
    };
    const location = req.body && typeof (req.body as Json)['location_id'] === 'string' ? { location: req.body as Json } : {};
    res.json(envelope(1000, { allowed: outcome, token, authorization_reference: `SBX-AUTH-${randomUUID().slice(0, 8)}`, ...location }));
  }

  private command(req: express.Request, res: express.Response): void {
    const name = String(req.params['command']).toUpperCase();
    const body = (req.body ?? {}) as Json;
    if (!(COMMANDS as readonly string[]).includes(name)) {
      res.json(envelope(2001, undefined, `unknown command ${name}`));
      return;
    }
    const command = name as CommandName;
    const session = typeof body['session_id'] === 'string' ? this.sessions.get(body['session_id']) : undefined;
    const token = body['token'] as Json | undefined;
    const plan = commandPlan(command, {
      ...(typeof body['location_id'] === 'string' ? { locationId: body['location_id'] } : {}),
      sessionRunning: session !== undefined && session.status !== 'COMPLETED',
      reservationKnown: typeof body['reservation_id'] === 'string' && this.reservations.has(body['reservation_id']),
      ...(token && typeof token['uid'] === 'string' ? { tokenOutcome: authorizationOutcome(token['uid']) } : {}),
    });
    this.deps.logger.info('sandbox CPO: command received', { command, answer: plan.answer, result: plan.answer === 'ACCEPTED' ? plan.result : undefined });
    if (plan.answer === 'REJECTED') {
      res.json(envelope(1000, { result: 'REJECTED', timeout: 30, message: [{ language: 'en', text: plan.reason }] }));
      return;
    }
    const timeout = plan.result === 'NONE' ? this.timing.silentCommandTimeoutSeconds : 30;
    res.json(envelope(1000, { result: 'ACCEPTED', timeout }));
    if (plan.result === 'NONE') return;
    const responseUrl = String(body['response_url']);
    this.timers.after(this.timing.resultDelayMs, async () => {
      await this.postResult(responseUrl, plan.result);
      if (plan.result !== 'ACCEPTED') return;
      if (command === 'START_SESSION' && token) await this.startSession(body, token);
      if (command === 'STOP_SESSION' && session) await this.stopSession(session);
      if (command === 'RESERVE_NOW' && typeof body['reservation_id'] === 'string') this.reservations.add(body['reservation_id']);
      if (command === 'CANCEL_RESERVATION' && typeof body['reservation_id'] === 'string') this.reservations.delete(body['reservation_id']);
    });
  }

  /** mod_commands.asciidoc, CommandResult: POSTed to the response_url the hub gave (its callback, no token). */
  private async postResult(responseUrl: string, result: string): Promise<void> {
    try {
      const res = await fetch(responseUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ result }), signal: AbortSignal.timeout(this.deps.timeoutMs) });
      if (!res.ok) this.deps.logger.warn('sandbox CPO: command result refused', { status: res.status });
    } catch (err) {
      this.deps.logger.warn('sandbox CPO: command result not delivered', { err });
    }
  }

  private async startSession(command: Json, token: Json): Promise<void> {
    const locationId = String(command['location_id']);
    const evseUid = typeof command['evse_uid'] === 'string' ? command['evse_uid'] : (evseUids(locationId)[0] ?? '');
    const now = new Date().toISOString();
    const s: SessionState = {
      // CiString(36) (mod_sessions.asciidoc, Session Object); its CDR id CDR-… fits CiString(39).
      id: `SBX-${randomUUID().replace(/-/g, '').slice(0, 24)}`,
      cpo: this.deps.party,
      token,
      locationId,
      evseUid,
      connectorId: typeof command['connector_id'] === 'string' ? command['connector_id'] : '1',
      authorizationReference: typeof command['authorization_reference'] === 'string' ? command['authorization_reference'] : undefined,
      startedAt: now,
      status: 'PENDING',
      kwh: 0,
      endedAt: undefined,
      lastUpdated: now,
    };
    this.sessions.set(s.id, s);
    const path = this.sessionPath(s);
    this.deps.logger.info('sandbox CPO: session PENDING', { session: s.id, emsp: `${String(token['country_code'])}/${String(token['party_id'])}` });
    await this.push('session PUT', 'PUT', path, sessionObject(s));
    await this.patchEvseStatus(locationId, evseUid, 'CHARGING');
    // mod_sessions.asciidoc, SessionStatus: PENDING until the EV draws energy, then ACTIVE.
    this.timers.after(this.timing.sessionTickMs, async () => {
      if (s.status !== 'PENDING') return;
      s.status = 'ACTIVE';
      s.lastUpdated = new Date().toISOString();
      await this.push('session PATCH', 'PATCH', path, { status: 'ACTIVE', kwh: s.kwh, last_updated: s.lastUpdated });
      this.deps.logger.info('sandbox CPO: session ACTIVE', { session: s.id });
      this.meter(s);
    });
    this.timers.after(this.timing.maxSessionMs, () => (s.status === 'COMPLETED' ? undefined : this.stopSession(s)));
  }

  private meter(s: SessionState): void {
    this.timers.after(this.timing.sessionTickMs, async () => {
      if (s.status !== 'ACTIVE') return;
      s.kwh = Math.round((s.kwh + this.timing.kwhPerTick) * 10_000) / 10_000;
      s.lastUpdated = new Date().toISOString();
      const current = sessionObject(s);
      await this.push('session PATCH', 'PATCH', this.sessionPath(s), { kwh: current['kwh'], total_cost: current['total_cost'], last_updated: s.lastUpdated });
      this.meter(s);
    });
  }

  private async stopSession(s: SessionState): Promise<void> {
    if (s.status === 'COMPLETED') return;
    const now = new Date().toISOString();
    s.status = 'COMPLETED';
    s.endedAt = now;
    s.lastUpdated = now;
    const current = sessionObject(s);
    await this.push('session PATCH', 'PATCH', this.sessionPath(s), { status: 'COMPLETED', end_date_time: now, kwh: current['kwh'], total_cost: current['total_cost'], last_updated: now });
    await this.patchEvseStatus(s.locationId, s.evseUid, 'AVAILABLE');
    const location = this.locations.find((l) => l['id'] === s.locationId) ?? {};
    const cdr = cdrObject(s, location, this.tariff, now);
    await this.push('CDR POST', 'POST', '/ocpi/2.2.1/cdrs', cdr);
    this.deps.logger.info('sandbox CPO: session COMPLETED, CDR posted', { session: s.id, cdr: cdr['id'], kwh: cdr['total_energy'], total_cost: cdr['total_cost'] });
  }

  private sessionPath(s: SessionState): string {
    return `/ocpi/2.2.1/sessions/${s.cpo.countryCode}/${s.cpo.partyId}/${s.id}`;
  }
}
