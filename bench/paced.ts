import { createConnection } from 'node:net';
import { appendFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { atNiceness, parseNiceness } from '../infra/stack/node-priority.ts';
import { fileURLToPath } from 'node:url';
import { percentile, type LoadResult } from './load.ts';
import { patchRequest, type PatchKind } from './patch-requests.ts';

// An open-loop load at a steady rate: request n is due at start + n / rate, sent then (or as soon as
// one of `connections` is free), and its latency counts from when it was due, so a stall shows in the
// percentiles instead of slowing the sender (coordinated omission). autocannon's rate options are not
// this: each connection gets its quota at the start of every second and spends it back to back, which
// measures bursts at full speed.
// The loop runs in a process of its own (this file, started by `paced`): in the bench process a
// collection of what the saturated rounds before left on its heap (autocannon's) stalled the sender
// for 20 ms at a time, and those stalls counted as the hub's latency.

export interface PacedOptions {
  readonly seconds: number;
  readonly connections: number;
  readonly headers: Record<string, string>;
  /** The PATCHes sent (patch-requests.ts), spread over `locations`. */
  readonly kind: PatchKind;
  readonly locations: number;
  /** Seconds of the same load run first and not counted. */
  readonly settleSeconds?: number;
}

/** What a paced phase measured, and the loader's own CPU per PATCH sent (its share of the host). */
export type PacedResult = LoadResult & { readonly loaderCpuMicrosPerRequest: number };

/**
 * Offers `rate` PATCH/s to `url` from a process of its own and returns what it measured.
 * BENCH_LOADER_NICENESS=N runs that process at niceness N: partners do not share the hub's host, so a
 * control of how much of a latency change is the loader's own scheduling (decision 0018).
 */
export async function paced(label: string, url: string, rate: number, options: PacedOptions): Promise<PacedResult> {
  const launched = atNiceness(parseNiceness('BENCH_LOADER_NICENESS', process.env['BENCH_LOADER_NICENESS'], 0), process.execPath, [fileURLToPath(import.meta.url), JSON.stringify({ label, url, rate, options })]);
  const child = spawn(launched.command, launched.args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const lines = output.trim().split('\n');
  if (code !== 0) throw new Error(`paced loader exited with ${code}: ${output}`);
  process.stdout.write(lines.slice(0, -1).map((l) => `${l}\n`).join(''));
  // JSON carries NaN (no CPU figure for a paced run) as null: restored, so the result is a LoadResult.
  return { ...(JSON.parse(lines.at(-1) ?? '{}') as PacedResult), cpuMicrosPerRequest: Number.NaN };
}

/**
 * The loader's HTTP/1.1 client: up to `connections` keep-alive sockets, one request at a time on each
 * (as node:http's Agent), each request written as one string and each answer read only as far as its
 * status line and Content-Length. node:http's client cost this process about 175 µs of CPU per PATCH
 * on a slow day, an eighth of the 2 cores the hub shares with it (docs/explanation/performance.md,
 * "What the paced loader costs").
 */
function keepAliveClient(host: string, port: number, connections: number) {
  interface Exchange {
    readonly request: string;
    /** The answer's HTTP status, or undefined when the socket failed first. */
    readonly done: (status: number | undefined) => void;
  }
  interface Connection {
    start(exchange: Exchange): void;
  }
  const idle: Connection[] = [];
  const waiting: Exchange[] = [];
  let open = 0;
  const headEnd = Buffer.from('\r\n\r\n');
  const connect = (): void => {
    open++;
    const socket = createConnection({ host, port });
    socket.setNoDelay(true);
    let current: Exchange | undefined;
    let connected = false;
    let buffered: Buffer = Buffer.alloc(0);
    const connection: Connection = {
      start(exchange) {
        current = exchange;
        socket.write(exchange.request);
      },
    };
    const next = (): void => {
      const exchange = waiting.shift();
      if (exchange) connection.start(exchange);
      else idle.push(connection);
    };
    socket.on('connect', () => ((connected = true), next()));
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf(headEnd);
      if (end < 0 || !current) return;
      const head = buffered.toString('latin1', 0, end);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      // Every answer of the hub carries a Content-Length (express's res.json); one without it counts
      // as an error and its socket is dropped, not parsed by guesswork.
      if (!length) return void socket.destroy();
      const answerEnd = end + 4 + Number(length[1]);
      if (buffered.length < answerEnd) return;
      buffered = buffered.subarray(answerEnd);
      const exchange = current;
      current = undefined;
      exchange.done(Number(head.slice(9, 12)));
      next();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      open--;
      const at = idle.indexOf(connection);
      if (at >= 0) idle.splice(at, 1);
      current?.done(undefined);
      current = undefined;
      // A refused connection fails what waits (the target is down) instead of reconnecting forever.
      if (!connected) for (const exchange of waiting.splice(0)) exchange.done(undefined);
      else if (waiting.length > 0 && open < connections) connect();
    });
  };
  return {
    send(request: string, done: Exchange['done']): void {
      const exchange = { request, done };
      const connection = idle.pop();
      if (connection) return connection.start(exchange);
      waiting.push(exchange);
      if (open < connections) connect();
    },
  };
}

/**
 * `settleSeconds` of the same load run first and are not counted: the steady state is measured, not
 * the host settling after whatever ran before (a saturated run leaves the projector and Postgres
 * catching up for about a second).
 */
async function run(label: string, url: string, rate: number, options: PacedOptions): Promise<PacedResult> {
  const target = new URL(url);
  const trace = process.env['BENCH_PACED_TRACE'];
  if (!/^(127\.0\.0\.1|localhost)$/.test(target.hostname)) throw new Error('load tests target loopback only');
  const client = keepAliveClient(target.hostname, Number(target.port), options.connections);
  const cpuAtStart = process.cpuUsage();
  const started = performance.now();
  const measuredFrom = started + (options.settleSeconds ?? 0) * 1000;
  const latencies: number[] = [];
  /** Requests answered over 50 ms after they were due, by the second of the run they were due in: where stalls were. */
  const lateBySecond: number[] = Array.from({ length: Math.ceil(options.seconds) }, () => 0);
  let errors = 0;
  let non2xx = 0;
  let inFlight = 0;
  const fixedHeaders = Object.entries({ host: target.host, ...options.headers }).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  const send = (path: string, body: string, dueAt: number): void => {
    inFlight++;
    const sentAt = performance.now();
    client.send(`PATCH ${path} HTTP/1.1\r\n${fixedHeaders}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, (status) => {
      inFlight--;
      if (status === undefined) return void errors++;
      const latency = performance.now() - dueAt;
      const second = Math.floor((dueAt - measuredFrom) / 1000);
      if (second < 0) return;
      latencies.push(latency);
      if (latency > 50 && second < lateBySecond.length) lateBySecond[second] = (lateBySecond[second] ?? 0) + 1;
      if (latency > 30 && trace) appendFileSync(trace, JSON.stringify({ t: Math.round(performance.timeOrigin + dueAt), kind: 'late', ms: Math.round(latency), sentLate: Math.round(sentAt - dueAt) }) + '\n');
      if (status < 200 || status > 299) non2xx++;
    });
  };
  const endsAt = measuredFrom + options.seconds * 1000;
  if (trace) appendFileSync(trace, JSON.stringify({ kind: 'phase', label, from: Math.round(performance.timeOrigin + measuredFrom), to: Math.round(performance.timeOrigin + endsAt) }) + '\n');
  let sent = 0;
  while (performance.now() < endsAt) {
    // Request n is due at started + n / rate: by now, requests 0 .. floor(elapsed * rate) are due.
    const due = Math.floor(((performance.now() - started) * rate) / 1000) + 1;
    while (sent < due && inFlight < options.connections) {
      const planned = patchRequest(options.kind, sent, options.locations);
      send(planned.path, planned.body, started + (sent * 1000) / rate);
      sent++;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  const elapsed = (performance.now() - measuredFrom) / 1000;
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 5));
  process.stdout.write(`${label}: answered over 50 ms after due, by second of the run: ${lateBySecond.join(' ')}\n`);
  // Its own share of the host, which the hub does not get while it runs.
  const cpu = process.cpuUsage(cpuAtStart);
  return {
    label,
    requests: latencies.length,
    requestsPerSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    non2xx,
    cpuMicrosPerRequest: Number.NaN,
    loaderCpuMicrosPerRequest: (cpu.user + cpu.system) / sent,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { label, url, rate, options } = JSON.parse(process.argv[2] ?? '{}') as { label: string; url: string; rate: number; options: PacedOptions };
  const result = await run(label, url, rate, options);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
