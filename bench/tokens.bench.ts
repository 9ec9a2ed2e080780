// Token push fan-out, on the real stack with the CPOs' tokens receivers as real HTTP
// servers in this process: an eMSP PUTs tokens at a steady rate and the dispatcher delivers each to the
// three CPOs routed to it (mod_tokens.asciidoc, Receiver interface PUT).
//   1. all CPOs up: PUT -> receipt at the last of the three CPOs, p50/p95/p99 (target p95 <= 200 ms);
//   2. one CPO hanging (never answering): the same for the two others (target p95 within 2x of run 1).
// Run: npm run bench -- tokens [tokens/s=200] [seconds=60] [warm-up seconds=20]
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { PartyRef } from '@hub/ocpi';
import { generateCredentialsToken } from '@hub/ocpi';
import { setRoutingRule } from '@hub/registry';
import { postgresRegistryStore } from '@hub/store';
import { call, createTestStack, repoRoot } from '@hub/testing';
import { benchPlatform, percentile, rssMiB, startNode } from './load.ts';
import { printFigures, type Figure } from './figures.ts';

type Json = Record<string, unknown>;
const rate = Number(process.argv[2] ?? 200);
const seconds = Number(process.argv[3] ?? 60);
// Steady state: the broker's JVM and the services compile their hot paths during the first seconds of load.
const warmupSeconds = Number(process.argv[4] ?? 20);
const out = (line: string) => process.stdout.write(`${line}\n`);
const tokenTemplate = JSON.parse(readFileSync(join(repoRoot, '..', 'shared', 'ocpi-2.2.1', 'examples', 'token_put_example.json'), 'utf8')) as Json;

/** A CPO's tokens receiver: records when each token uid arrived; can hang (never answer). */
interface TokensReceiver {
  readonly party: PartyRef;
  readonly token: string;
  /** The tokens receiver is {baseUrl}/ocpi/2.2.1/tokens. */
  readonly baseUrl: string;
  readonly receivedAt: Map<string, number>;
  hang: boolean;
  close(): Promise<void>;
}

async function tokensReceiver(party: PartyRef): Promise<TokensReceiver> {
  const receivedAt = new Map<string, number>();
  const token = generateCredentialsToken();
  const hanging = new Set<ServerResponse>();
  const receiver = { party, token, receivedAt, hang: false } as Omit<TokensReceiver, 'baseUrl' | 'close'>;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      if (receiver.hang) {
        hanging.add(res);
        return;
      }
      // PUT /ocpi/2.2.1/tokens/{emsp cc}/{emsp pid}/{uid}?type=
      const uid = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.split('/').pop() ?? '');
      if (!receivedAt.has(uid)) receivedAt.set(uid, performance.now());
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ status_code: 1000, timestamp: new Date().toISOString() }));
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(receiver, {
    baseUrl: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  });
}

const stack = await createTestStack('bench_tokens');
const env = stack.env({ HUB_PORT: '0', LOG_LEVEL: 'warn', ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_TIMEOUT_MS: '2000' });
const store = postgresRegistryStore(stack.pool);
const deps = { store, source: 'bench', actor: 'bench' };

/** Registers a party with credentials (and a CPO's tokens receiver URL); returns the token it calls the hub with. */
const platform = (party: PartyRef, role: 'CPO' | 'EMSP', receiver?: TokensReceiver): Promise<string> =>
  benchPlatform(stack, env['HUB_SECRET_KEY'] ?? '', party, role, receiver, ['tokens']);

const emsp = { countryCode: 'NL', partyId: 'EMP' };
const cpos = await Promise.all(['CPA', 'CPB', 'CPC'].map((partyId) => tokensReceiver({ countryCode: 'BE', partyId })));
const emspToken = await platform(emsp, 'EMSP');
for (const cpo of cpos) {
  await platform(cpo.party, 'CPO', cpo);
  await setRoutingRule(deps, { emsp, cpo: cpo.party, enabled: true });
}
const ingress = await startNode(join(repoRoot, 'services', 'ingress', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /ingress listening/);
const hub = `http://127.0.0.1:${/"port":(\d+)/.exec(ingress.line)?.[1]}`;
const dispatcher = await startNode(join(repoRoot, 'services', 'dispatcher', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /dispatcher running/);
const figures: Record<string, Figure> = {};

/** Pushes tokens at `rate` for `runSeconds`; per token, PUT -> receipt at the last of `measured`. */
async function run(label: string, runSeconds: number, measured: readonly TokensReceiver[]): Promise<number[]> {
  const sentAt = new Map<string, number>();
  let n = 0;
  let refused = 0;
  const pending = new Set<Promise<unknown>>();
  const deadline = Date.now() + runSeconds * 1000;
  while (Date.now() < deadline) {
    const tick = Date.now();
    for (let k = 0; k < rate / 100; k++) {
      const uid = `${label.replace(/\W+/g, '')}${n++}`;
      const body = { ...tokenTemplate, country_code: emsp.countryCode, party_id: emsp.partyId, uid, type: 'RFID', last_updated: new Date().toISOString() };
      sentAt.set(uid, performance.now());
      const p = call(hub, 'PUT', `/ocpi/2.2.1/tokens/${emsp.countryCode}/${emsp.partyId}/${uid}?type=RFID`, { token: emspToken, body }).then((r) => {
        if (r.body.status_code !== 1000) refused++;
      });
      pending.add(p);
      void p.finally(() => pending.delete(p));
    }
    const wait = 10 - (Date.now() - tick);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(pending);
  const settleBy = Date.now() + 30_000;
  const complete = () => [...sentAt.keys()].every((uid) => measured.every((c) => c.receivedAt.has(uid)));
  while (!complete() && Date.now() < settleBy) await new Promise((r) => setTimeout(r, 100));
  const latencies: number[] = [];
  let missing = 0;
  for (const [uid, sent] of sentAt) {
    const at = measured.map((c) => c.receivedAt.get(uid));
    if (at.some((t) => t === undefined)) missing++;
    else latencies.push(Math.max(...(at as number[])) - sent);
  }
  out(
    `${label}: ${n} token PUTs at ${rate}/s for ${runSeconds} s, ${refused} refused, ${missing} not at every measured CPO within 30 s; ` +
      `PUT -> last of ${measured.length} CPOs p50 ${percentile(latencies, 50).toFixed(0)} ms, p95 ${percentile(latencies, 95).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms; ` +
      `RSS ingress ${rssMiB(ingress.child.pid).toFixed(0)} MiB, dispatcher ${rssMiB(dispatcher.child.pid).toFixed(0)} MiB`,
  );
  return latencies;
}

try {
  await run('warm-up', warmupSeconds, cpos);
  const allUp = await run('all three CPOs up', seconds, cpos);
  const hanging = cpos[2] as TokensReceiver;
  hanging.hang = true;
  const oneHanging = await run('one CPO hanging', seconds, cpos.slice(0, 2));
  hanging.hang = false;
  Object.assign(figures, {
    all_up_last_cpo_p95_ms: percentile(allUp, 95),
    all_up_last_cpo_p99_ms: percentile(allUp, 99),
    one_hanging_others_p95_ms: percentile(oneHanging, 95),
    one_hanging_others_p99_ms: percentile(oneHanging, 99),
    hanging_over_all_up_p95_ratio: percentile(oneHanging, 95) / Math.max(1, percentile(allUp, 95)),
  });
} finally {
  ingress.child.kill('SIGTERM');
  dispatcher.child.kill('SIGTERM');
  for (const c of cpos) await c.close();
  await new Promise((r) => setTimeout(r, 1000));
  await stack.cleanup();
}
out(`(${new Date().toISOString()}, node ${process.version}, 2 cores)`);
printFigures(figures);
process.exit(0);
