import autocannon from 'autocannon';
import { generateCredentialsToken, hashCredentialsToken, type PartyRef } from '@hub/ocpi';
import { aesGcmTokenCipher, overrideEndpoint, registerParty, setRoutingRule } from '@hub/registry';
import { postgresRegistryStore } from '@hub/store';
import { call, type PartnerSimulator, type TestStack } from '@hub/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { hubProcessOf } from '../infra/stack/node-memory.ts';
import { atNiceness, launchNiceness } from '../infra/stack/node-priority.ts';
import { cpuSeconds, postgresCpuSeconds } from './cpu.ts';
import { benchMemorySettings, describeMemory, MEMORY_PROBE_ARGS, memoryProbeLine, type MemoryFigures } from './memory.ts';

export { rssMiB } from './memory.ts';
export { cpuSeconds, postgresCpuSeconds, profiled } from './cpu.ts';

export interface LoadResult {
  readonly label: string;
  readonly requestsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  readonly non2xx: number;
  /** Completed requests in the run. */
  readonly requests: number;
  /** CPU time (user + system) the server processes spent per request, in µs; NaN when not measured. */
  readonly cpuMicrosPerRequest: number;
}

/** A bounded load run against a loopback URL: fixed duration, fixed connections, then it stops. */
export interface LoadOptions {
  readonly seconds: number;
  readonly connections: number;
  readonly headers?: Record<string, string>;
  readonly method?: 'GET' | 'PUT' | 'PATCH' | 'POST';
  /** Varies each request (path, body); autocannon calls it per request. */
  readonly setupRequest?: (req: { path: string; body?: string }) => { path: string; body?: string };
  /**
   * The server's processes: their CPU time over the run is reported per request. Throughput on a
   * shared 2-core machine swings by tens of percent between runs (steal, the load generator's share);
   * CPU per request is the steadier measure of what a request costs the server.
   */
  readonly serverPids?: readonly number[];
  /**
   * Awaited after the last answer and before the CPU is read: work the run left queued (the projector
   * catching up with the events it appended) counts in this run, not in whichever runs next.
   */
  readonly settle?: () => Promise<void>;
}

export async function load(label: string, url: string, options: LoadOptions): Promise<LoadResult> {
  if (!/^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(url)) throw new Error('load tests target loopback only');
  const pids = options.serverPids ?? [];
  const cpuBefore = pids.map((pid) => cpuSeconds(pid));
  const postgresBefore = process.env['BENCH_CPU_BY_PROCESS'] ? postgresCpuSeconds() : 0;
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.seconds,
    headers: options.headers ?? {},
    pipelining: 1,
    ...(options.method ? { method: options.method } : {}),
    ...(options.setupRequest ? { requests: [{ setupRequest: options.setupRequest as never }] } : {}),
  });
  await options.settle?.();
  const requests = result.requests.total;
  const cpuUsed = pids.map((pid, i) => cpuSeconds(pid) - (cpuBefore[i] ?? 0));
  const perRequest = (seconds: number) => (requests > 0 ? (seconds * 1e6) / requests : Number.NaN);
  // BENCH_CPU_BY_PROCESS=1: where a request's CPU goes, per server process and all local Postgres.
  if (process.env['BENCH_CPU_BY_PROCESS']) {
    const parts = pids.map((pid, i) => `pid ${pid} ${perRequest(cpuUsed[i] ?? 0).toFixed(1)}`);
    process.stdout.write(`${label}: CPU µs per request: ${parts.join(', ')}, Postgres ${perRequest(postgresCpuSeconds() - postgresBefore).toFixed(1)}\n`);
  }
  return {
    label,
    requests,
    cpuMicrosPerRequest: pids.length > 0 ? perRequest(cpuUsed.reduce((a, b) => a + b, 0)) : Number.NaN,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

export function printTable(rows: readonly LoadResult[]): void {
  const lines = ['target                               req/s     p50 ms   p99 ms   errors  non-2xx  server CPU µs/req'];
  for (const r of rows) {
    lines.push(
      `${r.label.padEnd(36)} ${r.requestsPerSecond.toFixed(0).padStart(7)} ${r.p50.toFixed(2).padStart(9)} ${r.p99.toFixed(2).padStart(8)} ${String(r.errors).padStart(8)} ${String(r.non2xx).padStart(8)} ${(Number.isNaN(r.cpuMicrosPerRequest) ? '-' : r.cpuMicrosPerRequest.toFixed(1)).padStart(18)}`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * Starts a hub service or helper script as its own process and resolves once a line matches `ready`.
 * A hub process (services/<name>/src/main.ts) gets the memory flags, environment and CPU priority
 * `npm start` gives it (infra/stack/node-memory.ts, node-priority.ts), so benchmarks measure what
 * production runs (benchMemorySettings: BENCH_DEFAULT_HEAP, BENCH_MEMORY_FLAGS compare others;
 * PROJECTOR_NICENESS=0 runs the projector at the ingress's priority).
 * `nodeArgs` go before the script (e.g. --trace-gc); `onLine` sees every later output line (without
 * it the output is drained unread, so the load generator spends nothing on it). `memoryProbe` (or
 * BENCH_MEMORY_PROBE=1 for every hub process) preloads bench/memory-probe.ts: `memoryPeak()` then
 * gives where the memory was at the largest RSS, and with BENCH_MEMORY_PROBE it is printed at exit.
 */
export function startNode(
  script: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  options: { nodeArgs?: readonly string[]; onLine?: (line: string) => void; memoryProbe?: boolean } = {},
): Promise<{ child: ChildProcess; line: string; memoryPeak: () => MemoryFigures | undefined }> {
  const hubProcess = hubProcessOf(script);
  const printPeak = hubProcess !== undefined && process.env['BENCH_MEMORY_PROBE'] === '1';
  const probe = options.memoryProbe === true || printPeak;
  const memory = benchMemorySettings(hubProcess);
  let peak: MemoryFigures | undefined;
  return new Promise((resolve, reject) => {
    const nodeArgs = [...process.execArgv, ...memory.flags, ...(probe ? MEMORY_PROBE_ARGS : []), ...(options.nodeArgs ?? []), script, ...args];
    const launched = atNiceness(hubProcess ? launchNiceness(hubProcess, process.env) : 0, process.execPath, nodeArgs);
    const child = spawn(launched.command, launched.args, {
      env: { PATH: process.env['PATH'] ?? '', ...memory.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (printPeak) child.once('exit', () => process.stdout.write(`${hubProcess} memory at its RSS peak: ${describeMemory(peak)}\n`));
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => ready.test(l));
      if (line) {
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        const { onLine } = options;
        if (onLine || probe) {
          let rest = '';
          const follow = (chunk: Buffer) => {
            const lines = (rest + chunk.toString()).split('\n');
            rest = lines.pop() ?? '';
            for (const l of lines) {
              peak = memoryProbeLine(l) ?? peak;
              onLine?.(l);
            }
          };
          child.stdout?.on('data', follow);
          child.stderr?.on('data', follow);
        } else {
          child.stdout?.resume();
          child.stderr?.resume();
        }
        out = '';
        resolve({ child, line, memoryPeak: () => peak });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${script} exited ${code}: ${out.slice(-2000)}`)));
  });
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** A CPO and an eMSP with a routing rule and hub tokens, registered straight in the store. */
export async function onboardForBench(
  stack: TestStack,
  _hub: string,
  parties: { cpo: PartyRef; emsp: PartyRef },
): Promise<{ cpoToken: string; emspToken: string }> {
  const store = postgresRegistryStore(stack.pool);
  const deps = { store, source: 'bench', actor: 'bench' };
  const tokens: string[] = [];
  for (const [party, role] of [[parties.cpo, 'CPO'], [parties.emsp, 'EMSP']] as const) {
    const { platformId, initialToken } = await registerParty(deps, { party: { ...party, role }, name: `bench ${role}` });
    const hubToken = generateCredentialsToken();
    await store.saveCredentials(
      {
        platformId,
        presentedTokenHash: hashCredentialsToken(initialToken),
        newHubTokenHash: hashCredentialsToken(hubToken),
        partnerTokenSealed: Buffer.from('unused'),
        versionsUrl: 'https://bench.invalid/ocpi/versions',
        version: '2.2.1',
        endpoints: [],
        businessDetails: [],
        outbox: [],
      },
      'register',
    );
    tokens.push(hubToken);
  }
  await setRoutingRule(deps, { emsp: parties.emsp, cpo: parties.cpo, enabled: true });
  return { cpoToken: tokens[0] ?? '', emspToken: tokens[1] ?? '' };
}

/** A CPO registered to speak OCPI 2.1.1 only, with its credentials exchanged in 2.1.1: its hub token. */
export async function benchPlatform211(stack: TestStack, cpo: PartyRef): Promise<string> {
  const store = postgresRegistryStore(stack.pool);
  const { platformId, initialToken } = await registerParty({ store, source: 'bench', actor: 'bench' }, { party: { ...cpo, role: 'CPO' }, name: 'bench 2.1.1 CPO', versions: ['2.1.1'] });
  const hubToken = generateCredentialsToken();
  const change = { platformId, presentedTokenHash: hashCredentialsToken(initialToken), newHubTokenHash: hashCredentialsToken(hubToken), partnerTokenSealed: Buffer.from('unused'), versionsUrl: 'https://bench.invalid/ocpi/versions', version: '2.1.1' as const, endpoints: [], businessDetails: [], outbox: [] };
  await store.saveCredentials(change, 'register');
  return hubToken;
}

/**
 * A registered platform with one party, its hub token, and (for an eMSP with a simulator) receiver
 * URLs pointing at the simulator: straight in the store, as the account team and a credentials
 * exchange would leave it. Returns the hub token the platform presents.
 */
export async function benchPlatform(
  stack: TestStack,
  secretKeyBase64: string,
  party: PartyRef,
  role: 'CPO' | 'EMSP',
  /** The partner's server: its token and where its modules are ({baseUrl}/ocpi/2.2.1/{module}). */
  sim?: Pick<PartnerSimulator, 'token' | 'baseUrl'> & Partial<Pick<PartnerSimulator, 'versionsUrl'>>,
  modules: readonly string[] = ['sessions', 'cdrs'],
): Promise<string> {
  const store = postgresRegistryStore(stack.pool);
  const deps = { store, source: 'bench', actor: 'bench' };
  const cipher = aesGcmTokenCipher(Buffer.from(secretKeyBase64, 'base64'));
  const { platformId, initialToken } = await registerParty(deps, { party: { ...party, role }, name: `bench ${party.partyId}` });
  const hubToken = generateCredentialsToken();
  await store.saveCredentials(
    {
      platformId,
      presentedTokenHash: hashCredentialsToken(initialToken),
      newHubTokenHash: hashCredentialsToken(hubToken),
      partnerTokenSealed: cipher.seal(sim?.token ?? 'unused'),
      versionsUrl: sim?.versionsUrl ?? 'https://bench.invalid/ocpi/versions',
      version: '2.2.1',
      endpoints: [],
      businessDetails: [],
      outbox: [],
    },
    'register',
  );
  if (sim) {
    for (const module of modules) await overrideEndpoint(deps, { party: { ...party, role }, module, url: `${sim.baseUrl}/ocpi/2.2.1/${module}` });
  }
  return hubToken;
}

/** Medians of each target's rounds (errors summed): alternating rounds on a noisy machine. */
export function summarize(labels: readonly string[], runs: ReadonlyMap<string, readonly LoadResult[]>): LoadResult[] {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  return labels.map((label) => {
    const rs = runs.get(label) ?? [];
    return {
      label,
      requestsPerSecond: median(rs.map((r) => r.requestsPerSecond)),
      requests: rs.reduce((a, r) => a + r.requests, 0),
      cpuMicrosPerRequest: median(rs.map((r) => r.cpuMicrosPerRequest)),
      p50: median(rs.map((r) => r.p50)),
      p99: median(rs.map((r) => r.p99)),
      errors: rs.reduce((a, r) => a + r.errors, 0),
      non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
    };
  });
}

/**
 * The median over rounds of target/base, each round's pair run back to back: steadier than the ratio
 * of medians when the machine's speed drifts between rounds.
 */
export function pairedRatio(runs: ReadonlyMap<string, readonly LoadResult[]>, label: string, baseLabel: string, pick: (r: LoadResult) => number): number {
  const target = runs.get(label) ?? [];
  const base = runs.get(baseLabel) ?? [];
  const ratios = target.map((r, i) => pick(r) / pick(base[i] ?? r)).sort((a, b) => a - b);
  return ratios[Math.floor(ratios.length / 2)] ?? Number.NaN;
}

/**
 * Pulls a list from `path` by following the Link headers (transport_and_format.asciidoc, Pagination)
 * until there is no next page; throws on any answer other than 1000.
 */
export async function followLinks(hub: string, token: string, path: string): Promise<{ records: number; pages: number; seconds: number }> {
  const started = Date.now();
  let next: string | undefined = path;
  let records = 0;
  let pages = 0;
  while (next) {
    const res: Awaited<ReturnType<typeof call<unknown[]>>> = await call<unknown[]>(hub, 'GET', next, { token });
    if (res.body.status_code !== 1000) throw new Error(`${next}: ${res.text.slice(0, 200)}`);
    records += res.body.data?.length ?? 0;
    pages++;
    const link = /<([^>]+)>;\s*rel="next"/.exec(res.headers['link'] ?? '')?.[1];
    next = link ? `${new URL(link).pathname}${new URL(link).search}` : undefined;
  }
  return { records, pages, seconds: (Date.now() - started) / 1000 };
}
