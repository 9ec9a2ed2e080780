// A CPO under steady load for the cluster tests: session PUTs, CDR POSTs and location PATCHes at a
// bounded rate, each with its own X-Request-ID so its event can be found on Kafka, every answer kept.
import { randomUUID } from 'node:crypto';
import { call } from '@hub/testing';
import { ocpiExample } from '../helpers.ts';

type Json = Record<string, unknown>;
export type PushKind = 'session' | 'cdr' | 'patch';

export interface Push {
  readonly n: number;
  readonly kind: PushKind;
  /** Session id, CDR id, or the PATCHed location's id. */
  readonly id: string;
  readonly body: Json;
  readonly requestId: string;
  readonly sentAt: number;
  answeredAt: number;
  /** 0: no HTTP answer (the connection failed or was cut). */
  httpStatus: number;
  ocpiStatus?: number;
  retryAfter?: string;
  error?: string;
  /** Resent to another ingress after its first attempt got no answer (what a load balancer does). */
  resent: boolean;
}

export const CPO = { country_code: 'NL', party_id: 'STK' } as const;
export const EMSP = { country_code: 'NL', party_id: 'TST' } as const;
export const LOCATIONS = Array.from({ length: 10 }, (_, i) => `LOC-${i}`);

export function locationBody(id: string): Json {
  return { ...ocpiExample('location_example.json'), ...CPO, id, last_updated: '2020-01-01T00:00:00Z' };
}

function pushOf(n: number): { kind: PushKind; id: string; method: 'PUT' | 'POST' | 'PATCH'; path: string; body: Json } {
  const now = new Date().toISOString();
  switch (n % 3) {
    case 0: {
      const s = ocpiExample('session_example_1_simple_start.json');
      const id = `S-${n}`;
      const body = { ...s, ...CPO, id, status: 'ACTIVE', cdr_token: { ...(s['cdr_token'] as Json), ...EMSP }, last_updated: now };
      return { kind: 'session', id, method: 'PUT', path: `/ocpi/2.2.1/sessions/NL/STK/${id}`, body };
    }
    case 1: {
      const c = ocpiExample('cdr_example.json');
      const id = `C-${n}`;
      const body = { ...c, ...CPO, id, cdr_token: { ...(c['cdr_token'] as Json), ...EMSP }, last_updated: now };
      return { kind: 'cdr', id, method: 'POST', path: '/ocpi/2.2.1/cdrs', body };
    }
    default: {
      const id = LOCATIONS[n % LOCATIONS.length] ?? 'LOC-0';
      const body = { status: Math.floor(n / LOCATIONS.length) % 2 === 0 ? 'CHARGING' : 'AVAILABLE', last_updated: now };
      return { kind: 'patch', id, method: 'PATCH', path: `/ocpi/2.2.1/locations/NL/STK/${id}/3256`, body };
    }
  }
}

export interface Load {
  readonly pushes: Push[];
  /** Resolves when the load has ended and every push has its answer. */
  readonly done: Promise<void>;
  /** Pushes not sent because maxInFlight were unanswered (the load stays bounded). */
  skipped(): number;
  /** Ends the load before durationMs. */
  stop(): void;
}

/**
 * Sends one push every 1000/ratePerSecond ms until stop() (at most durationMs) to the ingress replicas hubs() lists
 * (round robin). A push that got no HTTP answer is resent once, same request id and body, to the next
 * replica: a load balancer does that for a refused connection, a CPO for a cut one.
 */
export function startLoad(o: { hubs: () => readonly string[]; token: string; ratePerSecond: number; durationMs: number; maxInFlight: number }): Load {
  const pushes: Push[] = [];
  const inFlight = new Set<Promise<void>>();
  let skipped = 0;
  let turn = 0;
  let stopped = false;
  const nextHub = () => {
    const hubs = o.hubs();
    return hubs[turn++ % hubs.length] ?? '';
  };
  const send = async (n: number) => {
    const { kind, id, method, path, body } = pushOf(n);
    const push: Push = { n, kind, id, body, requestId: randomUUID(), sentAt: Date.now(), answeredAt: 0, httpStatus: 0, resent: false };
    pushes.push(push);
    const first = nextHub();
    for (const hub of [first, o.hubs().find((h) => h !== first) ?? first]) {
      try {
        const res = await call(hub, method, path, { token: o.token, body, headers: { 'x-request-id': push.requestId } });
        push.httpStatus = res.status;
        push.ocpiStatus = res.body.status_code;
        if (res.headers['retry-after']) push.retryAfter = res.headers['retry-after'];
        delete push.error;
        break;
      } catch (e) {
        push.error = String((e as { code?: string }).code ?? (e as Error).message);
        if (hub === first) push.resent = true;
      }
    }
    push.answeredAt = Date.now();
  };
  const done = (async () => {
    const interval = 1000 / o.ratePerSecond;
    const start = Date.now();
    for (let n = 0; !stopped && Date.now() - start < o.durationMs; n++) {
      if (inFlight.size >= o.maxInFlight) skipped++;
      else {
        const p = send(n).finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      const wait = start + (n + 1) * interval - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    await Promise.all(inFlight);
  })();
  return { pushes, done, skipped: () => skipped, stop: () => void (stopped = true) };
}

export const acknowledged = (p: Push) => p.httpStatus === 200 && p.ocpiStatus === 1000;
/** The hub's "retry later": HTTP 503, OCPI 3000, with Retry-After (docs/reference/errors.md, UNAVAILABLE). */
export const retryable = (p: Push) => p.httpStatus === 503 && p.retryAfter !== undefined;
