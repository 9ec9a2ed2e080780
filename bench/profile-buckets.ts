// Summarises .cpuprofile files (node --cpu-prof) by self time into buckets of the hub's hot paths.
// Run: node bench/profile-buckets.ts FILE.cpuprofile [requests] [top]
// A frame with no script (a builtin such as JSON.parse, or code made by new Function such as ajv's
// validators) counts to the bucket of its nearest ancestor that has one, and is shown apart as
// "native under <bucket>" in the top list. (idle) is left out of the total.
import { readFileSync } from 'node:fs';

interface Frame { functionName: string; url: string; lineNumber: number }
interface Node { id: number; callFrame: Frame; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

const rules: Array<[string, RegExp]> = [
  ['GC', /^\(garbage collector\)$/],
  ['program (V8/native, unattributed)', /^\(program\)$/],
  ['Kafka client encode/produce/network', /node_modules\/.*@platformatic[+/]kafka|packages\/event-log\//],
  ['pg driver', /node_modules\/.*(\/pg\/|pg-protocol|pg-pool|pg-types|postgres-array|pg-connection-string)|packages\/store\/src\/pool/],
  ['logging', /packages\/observability\/src\/(logger|request-context)|node_modules\/.*(pino|winston)/],
  ['metrics', /node_modules\/.*prom-client|packages\/observability\/src\/metrics/],
  ['JSON parse/validation (ajv)', /node_modules\/.*(ajv|fast-uri|json-schema-traverse|fast-deep-equal)|schemas\/|validat/],
  ['auth/token lookup', /authenticate|credentials-token|cached-caller|registry\/src\/(credentials|token)/],
  ['event building/CloudEvents', /packages\/events\/|ocpi-objects|object-events|modules\/src\//],
  ['HTTP parse/express', /node:_http|node:http|node_modules\/.*(express|router|body-parser|raw-body|on-finished|finalhandler|send|qs|statuses|type-is|content-type|iconv|mime|accepts|negotiator|depd|parseurl|cookie|etag|fresh|vary|http-errors|media-typer|path-to-regexp)|node:_http_|services\/ingress\/src\/(app|http|method-not-allowed|compose|dependency-guards|circuit-breaker|version-edge)|packages\/ocpi\/src\/envelope/],
  ['net/streams/timers (node core)', /^node:/],
  ['projector apply (store/modules/service-kit)', /packages\/(store|service-kit|modules)\/|services\/projector/],
  ['hub other', /services\/|packages\//],
];
const bucketOfUrl = (fn: string, url: string): string | undefined => {
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(program)') return 'program (V8/native, unattributed)';
  if (fn === '(idle)') return 'idle';
  if (fn === '(root)') return 'root';
  if (!url) return undefined;
  if (transparentCore && /^node:/.test(url)) return undefined;
  for (const [name, re] of rules) if (re.test(url)) return name;
  return `other: ${url.replace(/^.*node_modules\/(\.pnpm\/)?/, '').split('/')[0]}`;
};

const [file, requestsArg, topArg] = process.argv.slice(2);
// BENCH_CORE_TO_CALLER=1: node: frames (sockets, streams, timers) count to their nearest library or hub caller.
const transparentCore = process.env['BENCH_CORE_TO_CALLER'] === '1';
const p = JSON.parse(readFileSync(file!, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map<number, number>();
for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
const buckets = new Map<string, number>();
const fns = new Map<string, number>();
let total = 0;
let idle = 0;
for (const [id, us] of self) {
  const n = byId.get(id)!;
  let b = bucketOfUrl(n.callFrame.functionName, n.callFrame.url);
  let native = false;
  if (b === undefined && transparentCore && /^node:/.test(n.callFrame.url)) b = undefined;
  if (b === undefined) {
    native = true;
    let cur = parent.get(id);
    while (cur !== undefined && b === undefined) {
      const c = byId.get(cur)!;
      b = bucketOfUrl(c.callFrame.functionName, c.callFrame.url);
      cur = parent.get(cur);
    }
    b ??= transparentCore ? 'net/streams/timers (node core)' : 'root';
  }
  if (b === 'idle') { idle += us; continue; }
  total += us;
  buckets.set(b, (buckets.get(b) ?? 0) + us);
  const fname = `${native ? `[native ${n.callFrame.functionName || '(anonymous)'} under ${b}]` : `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/\/work\/[^/]+\//, '')}:${n.callFrame.lineNumber + 1}`}`;
  fns.set(fname, (fns.get(fname) ?? 0) + us);
}
const wall = p.endTime - p.startTime;
const reqs = Number(requestsArg ?? 0);
process.stdout.write(`${file}: wall ${(wall / 1e6).toFixed(1)} s, sampled busy ${(total / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s${reqs ? `, ${reqs} requests` : ''}\n`);
for (const [b, us] of [...buckets].sort((a, c) => c[1] - a[1])) process.stdout.write(`  ${b.padEnd(46)} ${(100 * us / total).toFixed(1).padStart(5)}%${reqs ? ` ${(us / reqs).toFixed(1).padStart(7)} µs/req` : ''}\n`);
process.stdout.write('  top self-time frames:\n');
for (const [f, us] of [...fns].sort((a, c) => c[1] - a[1]).slice(0, Number(topArg ?? 25))) process.stdout.write(`    ${(100 * us / total).toFixed(1).padStart(5)}% ${f}\n`);
