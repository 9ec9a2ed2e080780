import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { hashCredentialsToken, credentialsTokenCandidates, partyKey, type PartyRef } from '@hub/ocpi';
import type { Logger } from '@hub/observability';
import type { OperatorDeps } from '@hub/registry';
import { DEFAULT_CPO_TIMING, SandboxCpo, type SandboxCpoTiming } from './cpo.ts';
import { DEFAULT_EMSP_TIMING, SandboxEmsp, type SandboxEmspTiming } from './emsp.ts';
import { onboardCounterpart, routeToCounterparts } from './onboarding.ts';
import { envelope, type Json, type PlatformCredentials } from './platform.ts';
import { COMMANDS, TOKEN_RULES, type CommandName } from './rules.ts';

// The sandbox: the two counterparts on one HTTP server (/cpo, /emsp), their onboarding and the
// sandbox routing, and the sandbox-only calls under /sandbox (docs/reference/sandbox.md).

export interface SandboxState {
  readonly cpo?: PlatformCredentials;
  readonly emsp?: PlatformCredentials;
}

export interface SandboxOptions {
  readonly hubUrl: string;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** The base URL the hub reaches the sandbox at; undefined: http://{host}:{port}. */
  readonly publicBaseUrl: string | undefined;
  readonly cpo: PartyRef;
  readonly emsp: PartyRef;
  /** The registry operations (hubctl's) with which the counterparts are registered and routed. */
  readonly operator: OperatorDeps;
  /** Publishes the registry outbox now, as hubctl does after each change. */
  readonly publishAudit: () => Promise<void>;
  readonly loadState: () => SandboxState;
  readonly saveState: (state: SandboxState) => void;
  readonly logger: Logger;
  /** How often newly registered parties are looked for (sandbox routing). */
  readonly routeEveryMs: number;
  readonly hubTimeoutMs: number;
  readonly cpoTiming?: Partial<SandboxCpoTiming>;
  readonly emspTiming?: Partial<SandboxEmspTiming>;
}

export interface RunningSandbox {
  readonly url: string;
  readonly cpo: SandboxCpo;
  readonly emsp: SandboxEmsp;
  stop(): Promise<void>;
}

export async function startSandbox(o: SandboxOptions): Promise<RunningSandbox> {
  const app = express();
  app.disable('x-powered-by');
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(o.port, o.host);
    s.once('listening', () => resolve(s));
    s.once('error', reject);
  });
  const url = o.publicBaseUrl ?? `http://${o.host}:${(server.address() as AddressInfo).port}`;
  const common = { hubUrl: o.hubUrl, logger: o.logger, timeoutMs: o.hubTimeoutMs };
  const cpo = new SandboxCpo({ ...common, baseUrl: `${url}/cpo`, party: o.cpo }, { ...DEFAULT_CPO_TIMING, ...o.cpoTiming });
  const emsp = new SandboxEmsp({ ...common, baseUrl: `${url}/emsp`, party: o.emsp }, { ...DEFAULT_EMSP_TIMING, ...o.emspTiming });
  app.use('/cpo', cpo.router);
  app.use('/emsp', emsp.router);
  app.use('/sandbox', controlRouter(o, cpo, emsp, url));
  let routing: NodeJS.Timeout | undefined;
  const stop = async () => {
    clearInterval(routing);
    cpo.stop();
    emsp.stop();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };
  try {
    const state = o.loadState();
    const cpoCredentials = await onboardCounterpart(o.operator, cpo, { role: 'CPO', name: 'Sandbox CPO', saved: state.cpo, publishAudit: o.publishAudit });
    o.saveState({ ...state, cpo: cpoCredentials });
    const emspCredentials = await onboardCounterpart(o.operator, emsp, { role: 'EMSP', name: 'Sandbox eMSP', saved: state.emsp, publishAudit: o.publishAudit });
    o.saveState({ cpo: cpoCredentials, emsp: emspCredentials });
    o.logger.info('sandbox: counterparts connected', { cpo: partyKey(o.cpo), emsp: partyKey(o.emsp), url });
    const route = async () => {
      const enabled = await routeToCounterparts(o.operator, { cpo: o.cpo, emsp: o.emsp }, o.publishAudit);
      if (enabled.length > 0) o.logger.info('sandbox: routing rules enabled', { rules: enabled });
    };
    await route();
    await cpo.start();
    await emsp.start();
    let routingBusy = false;
    routing = setInterval(() => {
      if (routingBusy) return;
      routingBusy = true;
      route()
        .catch((err: unknown) => o.logger.warn('sandbox: routing new parties failed', { err }))
        .finally(() => (routingBusy = false));
    }, o.routeEveryMs);
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, cpo, emsp, stop };
}

/**
 * The sandbox-only calls: a registered partner (its hub token) has the sandbox eMSP send a command or
 * an authorization to one of its own CPO parties, and reads what the sandbox eMSP received from it.
 * Long because: it declares those routes, each a short handler over the counterparts.
 */
function controlRouter(o: SandboxOptions, cpo: SandboxCpo, emsp: SandboxEmsp, url: string): express.Router {
  const router = express.Router();
  router.use(express.json({ type: () => true, limit: '100kb' }));
  router.get('/', (_req, res) => {
    res.json(envelope(1000, {
      environment: 'sandbox',
      hub: `${o.hubUrl}/ocpi/versions`,
      cpo: { country_code: o.cpo.countryCode, party_id: o.cpo.partyId, versions_url: cpo.versionsUrl },
      emsp: { country_code: o.emsp.countryCode, party_id: o.emsp.partyId, versions_url: emsp.versionsUrl },
      token_rules: TOKEN_RULES.map((r) => ({ uid_prefix: r.prefix, outcome: r.meaning })),
    }));
  });
  /** The caller's CPO party the body names; a party of another platform is refused (security: a party acts only as itself). */
  const callerCpo = async (req: express.Request, res: express.Response): Promise<PartyRef | undefined> => {
    const tokens = credentialsTokenCandidates(req.headers.authorization);
    let caller;
    for (const t of tokens) {
      caller = await o.operator.store.findCaller(hashCredentialsToken(t));
      if (caller) break;
    }
    if (!caller || caller.tokenKind !== 'HUB' || !caller.registered) {
      res.status(401).json(envelope(2000, undefined, 'Authorization: Token <the hub token of your platform> required (after the credentials exchange)'));
      return undefined;
    }
    const body = (req.body ?? {}) as Json;
    const named = body['cpo'] as { country_code?: unknown; party_id?: unknown } | undefined;
    const cpos = caller.parties.filter((p) => p.role === 'CPO' && !p.suspended);
    const target = named
      ? cpos.find((p) => p.countryCode === String(named.country_code).toUpperCase() && p.partyId === String(named.party_id).toUpperCase())
      : cpos.length === 1 ? cpos[0] : undefined;
    if (!target) {
      res.status(named ? 403 : 400).json(envelope(2001, undefined, named ? `"cpo" must be a CPO party of your platform (${cpos.map(partyKey).join(', ') || 'none'})` : '"cpo": {"country_code", "party_id"} is required: your platform has several CPO parties'));
      return undefined;
    }
    return { countryCode: target.countryCode, partyId: target.partyId };
  };
  const wrap = (fn: (req: express.Request, res: express.Response) => Promise<void>) => (req: express.Request, res: express.Response) => {
    fn(req, res).catch((err: unknown) => {
      o.logger.warn('sandbox: control call failed', { err });
      if (!res.headersSent) res.status(502).json(envelope(3000, undefined, `the hub could not be reached: ${(err as Error).message}`));
    });
  };
  router.post('/emsp/commands/:command', wrap(async (req, res) => {
    const command = String(req.params['command']).toUpperCase();
    if (!(COMMANDS as readonly string[]).includes(command)) {
      res.status(400).json(envelope(2001, undefined, `command must be one of ${COMMANDS.join(', ')}`));
      return;
    }
    const target = await callerCpo(req, res);
    if (!target) return;
    const { cpo: _cpo, response_url: _ignored, ...fields } = (req.body ?? {}) as Json;
    const { commandId, answer } = await emsp.sendCommand(target, command as CommandName, fields);
    res.json(envelope(1000, { command_id: commandId, result_url: `${url}/sandbox/emsp/command-results/${commandId}`, hub_answer: { http_status: answer.status, body: answer.body } }));
  }));
  router.get('/emsp/command-results/:id', wrap(async (req, res) => {
    if (!(await callerCpo(req, res))) return;
    const result = emsp.commandResults.get(String(req.params['id']));
    if (result) res.json(envelope(1000, result));
    else res.status(404).json(envelope(2003, undefined, 'no result received (yet) for that command id'));
  }));
  router.post('/emsp/authorize', wrap(async (req, res) => {
    const target = await callerCpo(req, res);
    if (!target) return;
    const body = (req.body ?? {}) as Json;
    const uid = typeof body['token_uid'] === 'string' ? body['token_uid'] : 'ALLOWED0001';
    const answer = await emsp.authorizeAt(target, uid, body['location'] as Json | undefined);
    res.json(envelope(1000, { token_uid: uid, hub_answer: { http_status: answer.status, body: answer.body } }));
  }));
  router.get('/emsp/received', wrap(async (req, res) => {
    const target = await callerCpo(req, res);
    if (!target) return;
    const mine = (object: Json) => object['country_code'] === target.countryCode && object['party_id'] === target.partyId;
    res.json(envelope(1000, { sessions: [...emsp.sessions.values()].filter(mine), cdrs: [...emsp.cdrs.values()].filter(mine) }));
  }));
  router.use((_req: express.Request, res: express.Response) => {
    res.status(404).json(envelope(2000, undefined, 'no such sandbox call (docs/reference/sandbox.md)'));
  });
  return router;
}
