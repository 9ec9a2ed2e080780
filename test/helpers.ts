import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { SchemaValidator } from '@hub/schemas';
import { repoRoot, type PartnerSimulator, type TestStack } from '@hub/testing';
import type { TopicRecord } from '@hub/event-log';

export { freePort } from '../infra/stack/proc.ts';

/** Runs hubctl exactly as `npm run hubctl` does (its main.ts), against a test stack's environment. */
export function hubctl(env: Record<string, string>, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runNode(join(repoRoot, 'packages', 'hubctl', 'src', 'main.ts'), args, env);
}

/** Runs a TypeScript entry point of the repository with the given environment; its output once it exits. */
export function runNode(entry: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [entry, ...args], {
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

export interface ReadRecord {
  readonly key: string;
  readonly value: string;
  readonly headers: Record<string, string>;
  readonly partition: number;
  readonly offset: string;
}

/** Reads a topic of the test stack from the beginning until `enough(records)` holds (or timeout). */
export async function readTopic(stack: TestStack, topic: string, enough: (records: ReadRecord[]) => boolean, timeoutMs: number): Promise<ReadRecord[]> {
  const records: ReadRecord[] = [];
  const asRead = (r: TopicRecord): ReadRecord => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.headers)) headers[k] = String(v);
    return { key: r.key?.toString() ?? '', value: r.value?.toString() ?? '', headers, partition: r.partition, offset: r.offset };
  };
  // The records as ReadRecords, converted once each as they arrive.
  const read = (rs: readonly TopicRecord[]): ReadRecord[] => {
    while (records.length < rs.length) records.push(asRead(rs[records.length] as TopicRecord));
    return records;
  };
  const { records: all } = await stack.eventLog.readTopics([topic], { until: (rs) => enough(read(rs)), timeoutMs });
  return read(all);
}

export interface OnboardedPlatform {
  readonly token: string;
  readonly platformId: string;
  readonly partner: PartnerSimulator;
}

/**
 * Registers a platform with its roles through hubctl and completes the credentials exchange with a
 * simulated partner server, as a real partner would; returns the hub token it then uses.
 */
export async function onboard(
  hub: string,
  env: Record<string, string>,
  name: string,
  roles: ReadonlyArray<{ role: 'CPO' | 'EMSP'; countryCode: string; partyId: string }>,
  modules?: Array<{ identifier: string; role: 'SENDER' | 'RECEIVER' }>,
): Promise<OnboardedPlatform> {
  const { call, startPartnerSimulator } = await import('@hub/testing');
  let platformId = '';
  let initialToken = '';
  for (const r of roles) {
    const args = ['party', 'register', '--role', r.role, '--country', r.countryCode, '--party', r.partyId, '--name', name, '--json'];
    const out = await hubctl(env, platformId ? [...args, '--platform', platformId] : args);
    if (out.code !== 0) throw new Error(`hubctl register failed: ${out.stderr}`);
    const parsed = JSON.parse(out.stdout) as { platform_id: string; initial_token: string };
    platformId = parsed.platform_id;
    initialToken ||= parsed.initial_token;
  }
  const partner = await startPartnerSimulator(modules ? { modules } : {});
  const res = await call<{ token: string }>(hub, 'POST', '/ocpi/2.2.1/credentials', {
    token: initialToken,
    body: {
      token: partner.token,
      url: partner.versionsUrl,
      roles: roles.map((r) => ({ role: r.role, country_code: r.countryCode, party_id: r.partyId, business_details: { name } })),
    },
  });
  if (res.body.status_code !== 1000 || !res.body.data) throw new Error(`credentials exchange failed: ${res.text}`);
  return { token: res.body.data.token, platformId, partner };
}

type PartyGiven = { role: 'CPO' | 'EMSP'; countryCode: string; partyId: string };
type ModulesGiven = Array<{ identifier: string; role: 'SENDER' | 'RECEIVER' }>;

/**
 * Registers one party allowed only `version` and runs that version's credentials exchange from a
 * partner simulator: 2.1.1's Credentials name one party and no roles (credentials.md, 2.1.1), 2.3.0's
 * carry roles (ocpi-2.3.0/credentials.asciidoc).
 */
async function onboardIn(version: '2.1.1' | '2.3.0', hub: string, env: Record<string, string>, name: string, party: PartyGiven, modules?: ModulesGiven): Promise<OnboardedPlatform> {
  const { call, startPartnerSimulator } = await import('@hub/testing');
  const out = await hubctl(env, ['party', 'register', '--role', party.role, '--country', party.countryCode, '--party', party.partyId, '--name', name, '--versions', version, '--json']);
  if (out.code !== 0) throw new Error(`hubctl register failed: ${out.stderr}`);
  const registered = JSON.parse(out.stdout) as { platform_id: string; initial_token: string };
  const partner = await startPartnerSimulator(modules ? { modules } : {});
  partner.versions = [version];
  const own = { token: partner.token, url: partner.versionsUrl };
  const body =
    version === '2.1.1'
      ? { ...own, party_id: party.partyId, country_code: party.countryCode, business_details: { name } }
      : { ...own, roles: [{ role: party.role, country_code: party.countryCode, party_id: party.partyId, business_details: { name } }] };
  const res = await call<{ token: string }>(hub, 'POST', `/ocpi/${version}/credentials`, { token: registered.initial_token, body });
  if (res.body.status_code !== 1000 || !res.body.data) throw new Error(`${version} credentials exchange failed: ${res.text}`);
  return { token: res.body.data.token, platformId: registered.platform_id, partner };
}

/** Registers one party allowed only OCPI 2.1.1 and runs the 2.1.1 credentials exchange. */
export function onboard211(hub: string, env: Record<string, string>, name: string, party: PartyGiven, modules?: ModulesGiven): Promise<OnboardedPlatform> {
  return onboardIn('2.1.1', hub, env, name, party, modules);
}

/** Registers one party allowed only OCPI 2.3.0 and runs the 2.3.0 credentials exchange. */
export function onboard230(hub: string, env: Record<string, string>, name: string, party: PartyGiven, modules?: ModulesGiven): Promise<OnboardedPlatform> {
  return onboardIn('2.3.0', hub, env, name, party, modules);
}

/** Follows Link rel="next" from a first page URL; returns every page's data in order. */
/** Follows the Link headers from firstPath; betweenPages runs after each page (e.g. to push changes). */
export async function followPages<T>(
  hub: string,
  firstPath: string,
  token: string,
  betweenPages?: (page: readonly T[]) => Promise<void>,
): Promise<{ items: T[]; pages: number; totals: string[] }> {
  const { call } = await import('@hub/testing');
  const items: T[] = [];
  const totals: string[] = [];
  let path: string | undefined = firstPath;
  let pages = 0;
  while (path) {
    const res: Awaited<ReturnType<typeof call<T[]>>> = await call<T[]>(hub, 'GET', path, { token });
    if (res.body.status_code !== 1000) throw new Error(`page ${path}: ${res.text}`);
    items.push(...(res.body.data ?? []));
    totals.push(res.headers['x-total-count'] ?? '');
    await betweenPages?.(res.body.data ?? []);
    pages++;
    const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers['link'] ?? '')?.[1];
    path = next ? `${new URL(next).pathname}${new URL(next).search}` : undefined;
    if (pages > 10_000) throw new Error('runaway pagination');
  }
  return { items, pages, totals };
}

/** Polls until check() gives a value (sync or async), or fails naming what it waited for. */
export async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The OCPI 2.2.1 JSON examples (shared/ocpi-2.2.1/examples, beside the repository). */
export const ocpiExamples = new URL('../../shared/ocpi-2.2.1/examples/', import.meta.url);

/** One OCPI 2.2.1 example, parsed. */
export function ocpiExample(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(name, ocpiExamples), 'utf8')) as Record<string, unknown>;
}

/** The OCPI 2.3.0 JSON examples (shared/ocpi-2.3.0/examples, beside the repository). */
export const ocpi230Examples = new URL('../../shared/ocpi-2.3.0/examples/', import.meta.url);

/** One OCPI 2.3.0 example, parsed. */
export function example230(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(name, ocpi230Examples), 'utf8')) as Record<string, unknown>;
}

/** Enables a routing rule between every eMSP and every CPO given (CC/PID), as an operator does. */
export async function routeEvery(env: Record<string, string>, emsps: readonly string[], cpos: readonly string[]): Promise<void> {
  for (const emsp of emsps) {
    for (const cpo of cpos) {
      const out = await hubctl(env, ['routing', 'enable', '--emsp', emsp, '--cpo', cpo]);
      if (out.code !== 0) throw new Error(`routing enable ${emsp} -> ${cpo}: ${out.stderr}`);
    }
  }
}

/** The first JSON example after a heading of an OCPI 2.1.1 chapter (shared/ocpi-2.1.1/*.md). */
export function example211(chapter: string, heading: string): Record<string, unknown> {
  const text = readFileSync(new URL(`../../shared/ocpi-2.1.1/${chapter}`, import.meta.url), 'utf8');
  const from = text.indexOf(heading);
  if (from < 0) throw new Error(`${chapter}: no heading ${heading}`);
  return JSON.parse(/```json\n([\s\S]*?)```/.exec(text.slice(from))?.[1] ?? '') as Record<string, unknown>;
}

/** Fails naming every violation when `value` is not valid against a schema of schemas/ (e.g. ocpi-2.1.1/session.json). */
export async function assertValid(schema: string, value: unknown): Promise<void> {
  const { createSchemaValidator, describeViolations } = await import('@hub/schemas');
  validator ??= createSchemaValidator();
  const { violations } = validator.validate(schema, value);
  if (violations.length > 0) throw new Error(`${schema}: ${describeViolations(violations)}\n${JSON.stringify(value)}`);
}
let validator: SchemaValidator | undefined;
