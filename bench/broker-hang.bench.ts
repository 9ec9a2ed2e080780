// Refusals during a broker hang (docs/decisions/0002-fast-refusals.md): session PUTs at a steady rate
// to an ingress on 127.0.0.1 while its Kafka broker (one this script starts, stopped and continued by
// its pid only) is hung with SIGSTOP for a while, then resumed. Prints the answer times of the pushes
// sent after the first 12 s of the hang (p50, p90, max), the share of answers that are OCPI envelopes,
// and how long after the resume the first push is accepted. Bounded: it stops by itself.
// Run: npm run bench -- broker-hang [breaker=on|off] [rate/s=180] [hang seconds=24]
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { authHeader, createTestStack, repoRoot } from '@hub/testing';
import { startBroker } from '../infra/stack/kafka.ts';
import { local } from '../infra/stack/paths.ts';
import { freePort } from '../infra/stack/proc.ts';
import { printFigures } from './figures.ts';
import { onboardForBench, percentile, startNode } from './load.ts';

const breaker = (process.argv[2] ?? 'on') !== 'off';
const rate = Number(process.argv[3] ?? 180);
const hangSeconds = Number(process.argv[4] ?? 24);
const MEASURED_AFTER_MS = 12_000;
const WARM_UP_MS = 5_000;
const RESUME_LIMIT_MS = 30_000;
// Whatever happens, the script ends: the broker is continued and everything it started is stopped.
const deadline = setTimeout(() => {
  process.stderr.write('broker-hang: overall time limit reached\n');
  process.exit(1);
}, 180_000 + hangSeconds * 1000);
deadline.unref();

const home = join(local, 'kafka', `bench-hang-${process.pid}`);
const broker = await startBroker({ home, port: await freePort(), controllerPort: await freePort(), heapMb: 384 });
const stack = await createTestStack('bench_broker_hang', { brokers: [broker.brokers] });
const env = stack.env({ HUB_PORT: '0', LOG_LEVEL: 'warn', BREAKER_ENABLED: String(breaker) });
const party = { countryCode: 'BE', partyId: 'BEC' };
const { cpoToken } = await onboardForBench(stack, '', { cpo: party, emsp: { countryCode: 'DE', partyId: 'EMA' } });
const ingress = await startNode(join(repoRoot, 'services', 'ingress', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /ingress listening/);
const hub = `http://127.0.0.1:${/"port":(\d+)/.exec(ingress.line)?.[1]}`;
const agent = new Agent({ headersTimeout: 120_000, bodyTimeout: 120_000, keepAliveTimeout: 30_000 });

interface Answer {
  readonly sentAt: number;
  readonly answeredAt: number;
  readonly status: number;
  readonly ocpiStatus: number | undefined;
  readonly envelope: boolean;
  readonly retryAfter: boolean;
}
let hungAt = 0;
let resumedAt = 0;
let answers: Answer[] = [];
let acceptedAt: number | undefined;
const session = JSON.parse(readFileSync(join(repoRoot, '..', 'shared', 'ocpi-2.2.1', 'examples', 'session_example_1_simple_start.json'), 'utf8')) as Record<string, unknown>;
let n = 0;
const push = async (): Promise<Answer> => {
  const id = `HANG-${n++}`;
  const sentAt = Date.now();
  try {
    const res = await request(`${hub}/ocpi/2.2.1/sessions/BE/BEC/${id}`, {
      method: 'PUT',
      dispatcher: agent,
      headers: { authorization: authHeader(cpoToken), 'content-type': 'application/json' },
      body: JSON.stringify({ ...session, country_code: 'BE', party_id: 'BEC', id }),
    });
    const text = await res.body.text();
    let body: { status_code?: unknown; timestamp?: unknown } | undefined;
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      body = undefined;
    }
    const envelope = typeof body?.status_code === 'number' && typeof body.timestamp === 'string';
    const answer = { sentAt, answeredAt: Date.now(), status: res.statusCode, ocpiStatus: envelope ? (body?.status_code as number) : undefined, envelope, retryAfter: res.headers['retry-after'] !== undefined };
    if (resumedAt > 0 && answer.ocpiStatus === 1000 && acceptedAt === undefined) acceptedAt = answer.answeredAt;
    return answer;
  } catch {
    return { sentAt, answeredAt: Date.now(), status: 0, ocpiStatus: undefined, envelope: false, retryAfter: false };
  }
};

/** Sends at `rate` per second until `until` says stop; returns every answer. */
async function paced(until: () => boolean): Promise<Answer[]> {
  const pending: Array<Promise<Answer>> = [];
  const started = Date.now();
  let sent = 0;
  while (!until()) {
    const due = Math.floor(((Date.now() - started) / 1000) * rate);
    for (; sent < due; sent++) pending.push(push());
    await new Promise((r) => setTimeout(r, 5));
  }
  return Promise.all(pending);
}

try {
  const warm = await paced(((t) => () => Date.now() - t >= WARM_UP_MS)(Date.now()));
  if (!warm.every((a) => a.ocpiStatus === 1000)) throw new Error(`warm-up pushes not all accepted: ${warm.filter((a) => a.ocpiStatus !== 1000).length} of ${warm.length}`);
  process.kill(broker.pid, 'SIGSTOP');
  hungAt = Date.now();
  let resumed = false;
  const resume = setTimeout(() => {
    process.kill(broker.pid, 'SIGCONT');
    resumedAt = Date.now();
    resumed = true;
  }, hangSeconds * 1000);
  // Pushes keep coming through the hang and after it, until one is accepted after the resume (or
  // RESUME_LIMIT_MS have passed).
  try {
    answers = await paced(() => resumed && (acceptedAt !== undefined || Date.now() - resumedAt > RESUME_LIMIT_MS));
  } finally {
    clearTimeout(resume);
    if (!resumed) process.kill(broker.pid, 'SIGCONT');
  }
  const firstAccepted = answers.filter((a) => a.ocpiStatus === 1000 && a.answeredAt >= resumedAt).map((a) => a.answeredAt);
  if (firstAccepted.length > 0) acceptedAt = Math.min(...firstAccepted);
} finally {
  if (hungAt > 0 && resumedAt === 0) process.kill(broker.pid, 'SIGCONT');
  ingress.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  await agent.close();
  await stack.cleanup();
  await broker.stop();
  rmSync(home, { recursive: true, force: true });
}

const during = answers.filter((a) => a.sentAt >= hungAt && a.sentAt < resumedAt);
const measured = during.filter((a) => a.sentAt - hungAt >= MEASURED_AFTER_MS).map((a) => a.answeredAt - a.sentAt);
const early = during.filter((a) => a.sentAt - hungAt < MEASURED_AFTER_MS).map((a) => a.answeredAt - a.sentAt);
const envelopes = during.filter((a) => a.envelope).length;
const refused = during.filter((a) => a.status === 503 && a.ocpiStatus === 3000 && a.retryAfter).length;
const s = (ms: number) => (ms / 1000).toFixed(3);
process.stdout.write(
  [
    `broker hung ${hangSeconds} s under ${rate} session PUTs/s, circuit breaker ${breaker ? 'on' : 'off'} (${new Date().toISOString()})`,
    `pushes sent during the hang: ${during.length}; 503 with Retry-After and OCPI 3000: ${refused}; OCPI envelopes: ${envelopes} (${((100 * envelopes) / Math.max(1, during.length)).toFixed(1)} %)`,
    `sent in the first ${MEASURED_AFTER_MS / 1000} s: ${early.length}, answer p50 ${s(percentile(early, 50))} s, p90 ${s(percentile(early, 90))} s, max ${s(Math.max(...early))} s`,
    `sent after the first ${MEASURED_AFTER_MS / 1000} s: ${measured.length}, answer p50 ${s(percentile(measured, 50))} s, p90 ${s(percentile(measured, 90))} s, max ${s(Math.max(...measured))} s`,
    `first push accepted ${acceptedAt === undefined ? 'not within the limit' : `${s(acceptedAt - resumedAt)} s`} after the broker resumed`,
  ].join('\n') + '\n',
);
printFigures({
  breaker_on: breaker,
  rate_per_s: rate,
  hang_s: hangSeconds,
  pushes_during_hang: during.length,
  refused_503_during_hang: refused,
  envelope_share_pct: (100 * envelopes) / Math.max(1, during.length),
  after_12s_pushes: measured.length,
  after_12s_p50_ms: percentile(measured, 50),
  after_12s_p90_ms: percentile(measured, 90),
  after_12s_max_ms: Math.max(...measured),
  first_12s_p50_ms: percentile(early, 50),
  first_acceptance_after_resume_s: acceptedAt === undefined ? null : (acceptedAt - resumedAt) / 1000,
});
process.exit(0);
