import { randomUUID } from 'node:crypto';
import express from 'express';
import { authorizationHeader, credentialsTokenCandidates, generateCredentialsToken, type PartyRef } from '@hub/ocpi';
import type { Logger } from '@hub/observability';

// What both sandbox counterparts are: an OCPI 2.2.1 platform with its own versions and version
// details (version_information_endpoint.asciidoc), answering only to the token it gave the hub
// (credentials.asciidoc, CREDENTIALS_TOKEN_B), and calling the hub with the token the hub gave it.

export type Json = Record<string, unknown>;

export interface ModuleEndpoint {
  readonly identifier: string;
  readonly role: 'SENDER' | 'RECEIVER';
  /** Path under the platform's /ocpi/2.2.1. */
  readonly path: string;
}

/** What a counterpart keeps across restarts of the sandbox: both tokens of its credentials exchange. */
export interface PlatformCredentials {
  /** The token the hub presents to this platform (given to the hub in POST credentials). */
  readonly ownToken: string;
  /** The token this platform presents to the hub (the hub's answer to POST credentials). */
  readonly hubToken: string;
}

export interface HubAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: { status_code?: number; status_message?: string; data?: unknown } | undefined;
}

export interface PlatformDeps {
  /** The hub's partner API base, e.g. http://127.0.0.1:8090 */
  readonly hubUrl: string;
  /** This platform's base URL as the hub reaches it, e.g. http://127.0.0.1:8091/cpo */
  readonly baseUrl: string;
  readonly party: PartyRef;
  readonly logger: Logger;
  /** How long a call to the hub may take. */
  readonly timeoutMs: number;
}

export class OcpiPlatform {
  readonly router = express.Router();
  /** Set by the credentials exchange (onboarding.ts) or restored from the sandbox's state. */
  credentials: PlatformCredentials | undefined;
  /** A fresh token to offer the hub in the credentials exchange. */
  readonly offeredToken = generateCredentialsToken();
  readonly versionsUrl: string;
  readonly deps: PlatformDeps;
  readonly modules: readonly ModuleEndpoint[];

  constructor(deps: PlatformDeps, modules: readonly ModuleEndpoint[]) {
    this.deps = deps;
    this.modules = modules;
    this.versionsUrl = `${deps.baseUrl}/ocpi/versions`;
    this.router.use(express.json({ type: () => true, limit: '1mb' }));
    // Only the hub calls a counterpart, with the token it was given (or is being given).
    this.router.use((req, res, next) => {
      const presented = credentialsTokenCandidates(req.headers.authorization);
      const accepted = [this.credentials?.ownToken, this.offeredToken].filter((t): t is string => t !== undefined);
      if (!presented.some((t) => accepted.includes(t))) {
        res.status(401).json(envelope(2000, undefined, 'unknown token'));
        return;
      }
      next();
    });
    this.router.get('/ocpi/versions', (_req, res) => {
      res.json(envelope(1000, [{ version: '2.2.1', url: `${deps.baseUrl}/ocpi/2.2.1` }]));
    });
    this.router.get('/ocpi/2.2.1', (_req, res) => {
      res.json(envelope(1000, { version: '2.2.1', endpoints: modules.map((m) => ({ identifier: m.identifier, role: m.role, url: `${deps.baseUrl}/ocpi/2.2.1/${m.path}` })) }));
    });
    // mod_hub_client_info.asciidoc, Receiver interface: the hub tells who is connected.
    this.router.put('/ocpi/2.2.1/hubclientinfo/:cc/:pid', (req, res) => {
      const info = req.body as Json;
      deps.logger.info('sandbox: ClientInfo received', { party: `${req.params['cc']}/${req.params['pid']}`, role: info['role'], status: info['status'] });
      res.json(envelope(1000));
    });
    this.router.get('/ocpi/2.2.1/hubclientinfo/:cc/:pid', (_req, res) => {
      res.status(404).json(envelope(2003, undefined, 'unknown object'));
    });
  }

  get token(): string {
    const token = this.credentials?.hubToken;
    if (!token) throw new Error(`sandbox ${this.deps.party.countryCode}/${this.deps.party.partyId} has no hub token yet (credentials exchange not done)`);
    return token;
  }

  /** Calls the hub's partner API as this platform; `to` names the receiving party (transport_and_format.asciidoc, Message Routing). */
  async callHub(method: string, path: string, options: { body?: unknown; to?: PartyRef; token?: string } = {}): Promise<HubAnswer> {
    const headers: Record<string, string> = {
      authorization: authorizationHeader(options.token ?? this.token),
      'x-request-id': randomUUID(),
      'x-correlation-id': randomUUID(),
      'ocpi-from-country-code': this.deps.party.countryCode,
      'ocpi-from-party-id': this.deps.party.partyId,
    };
    if (options.to) {
      headers['ocpi-to-country-code'] = options.to.countryCode;
      headers['ocpi-to-party-id'] = options.to.partyId;
    }
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.deps.hubUrl}${path}`, {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: AbortSignal.timeout(this.deps.timeoutMs),
    });
    const text = await res.text();
    let body: HubAnswer['body'];
    try {
      body = JSON.parse(text) as HubAnswer['body'];
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, body };
  }

  /** A call whose refusal is logged, not thrown: the sandbox keeps running when one push fails. */
  async push(what: string, method: string, path: string, body?: unknown, to?: PartyRef): Promise<boolean> {
    try {
      const answer = await this.callHub(method, path, { ...(body === undefined ? {} : { body }), ...(to ? { to } : {}) });
      if (answer.body?.status_code === 1000) return true;
      this.deps.logger.warn(`sandbox: ${what} refused by the hub`, { status: answer.status, status_code: answer.body?.status_code, status_message: answer.body?.status_message });
    } catch (err) {
      this.deps.logger.warn(`sandbox: ${what} failed`, { err });
    }
    return false;
  }

  /** Follows Link rel="next" (transport_and_format.asciidoc, Pagination) and returns every page's data. */
  async pullAll(path: string): Promise<Json[]> {
    const items: Json[] = [];
    let next: string | undefined = path;
    for (let pages = 0; next !== undefined && pages < 1000; pages++) {
      const answer = await this.callHub('GET', next);
      if (answer.body?.status_code !== 1000) throw new Error(`GET ${next}: HTTP ${answer.status}, OCPI ${String(answer.body?.status_code)} ${answer.body?.status_message ?? ''}`);
      items.push(...((answer.body.data as Json[] | undefined) ?? []));
      const link = /<([^>]+)>;\s*rel="next"/.exec(answer.headers.get('link') ?? '')?.[1];
      next = link ? `${new URL(link).pathname}${new URL(link).search}` : undefined;
    }
    return items;
  }
}

export function envelope(statusCode: number, data?: unknown, message?: string): Json {
  return { status_code: statusCode, ...(message ? { status_message: message } : {}), ...(data === undefined ? {} : { data }), timestamp: new Date().toISOString() };
}

/** A timer set the counterparts use, so that stop() ends every one of them (the sandbox is bounded). */
export class Timers {
  private readonly handles = new Set<NodeJS.Timeout>();
  private stopped = false;

  after(ms: number, fn: () => unknown): void {
    if (this.stopped) return;
    const h = setTimeout(() => {
      this.handles.delete(h);
      void Promise.resolve(fn()).catch(() => undefined);
    }, ms);
    this.handles.add(h);
  }

  every(ms: number, fn: () => unknown): void {
    if (this.stopped) return;
    let running = false;
    const h = setInterval(() => {
      if (running) return;
      running = true;
      void Promise.resolve(fn()).catch(() => undefined).finally(() => (running = false));
    }, ms);
    this.handles.add(h);
  }

  stop(): void {
    this.stopped = true;
    for (const h of this.handles) clearTimeout(h);
    this.handles.clear();
  }
}
