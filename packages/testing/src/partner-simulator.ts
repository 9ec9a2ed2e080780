import express from 'express';
import type { Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { credentialsTokenCandidates } from '@hub/ocpi';
import { routePartnerEndpoints } from './partner-simulator-routes.ts';

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

/** What the simulator answers until a test changes it: every answer a success. */
const defaults = (token: string) => ({
  baseUrl: '',
  versionsUrl: '',
  token,
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
}) satisfies Omit<PartnerSimulator, 'goDown' | 'comeUp' | 'close'>;

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
    ...defaults(options.token ?? `partner-token-${Math.random().toString(36).slice(2)}`),
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
  routePartnerEndpoints(app, sim, modules);

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
