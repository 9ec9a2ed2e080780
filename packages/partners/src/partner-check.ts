import { randomUUID } from 'node:crypto';
import { ocpiModules, type OcpiModule } from '@hub/modules';
import { authorizationHeader, isOcpiVersion, OCPI_VERSION } from '@hub/ocpi';
import { PartnerCallError } from '@hub/core';
import { checkOutboundUrl, type OutboundPolicy } from './outbound-policy.ts';
import { inspectTls } from './tls-inspect.ts';
import { ocpiPartnerClient, type OcpiPartnerClient } from './ocpi-partner-client.ts';

// Partner check (docs/how-to/partner-check.md): the hub's side of onboarding step (e) (interface
// document, Onboarding sequence), run against a registered partner's platform as deliveries will need
// it. Every call is a GET with the partner's token; nothing is sent that a receiver would store. The
// version to check is a parameter so that per-party versions extend it with their own module lists.

export type CheckedRole = 'CPO' | 'EMSP';

/** The receivers a role must serve (interface document, Partner responsibilities by role), per OCPI version. */
export const REQUIRED_RECEIVERS: Readonly<Record<string, Readonly<Record<CheckedRole, readonly string[]>>>> = {
  '2.2.1': { CPO: ['tokens', 'commands'], EMSP: ['sessions', 'cdrs'] },
  // mod_tokens.md and mod_commands.md (CPO interface), mod_sessions.md and mod_cdrs.md (eMSP interface), 2.1.1.
  '2.1.1': { CPO: ['tokens', 'commands'], EMSP: ['sessions', 'cdrs'] },
  // mod_tokens.asciidoc, mod_commands.asciidoc, mod_sessions.asciidoc, mod_cdrs.asciidoc (2.3.0): the same receivers as 2.2.1.
  '2.3.0': { CPO: ['tokens', 'commands'], EMSP: ['sessions', 'cdrs'] },
};

/** Receivers checked when the partner lists them (the hub delivers to them), but not required. */
export const OPTIONAL_RECEIVERS: Readonly<Record<string, readonly string[]>> = { '2.2.1': ['hubclientinfo'], '2.3.0': ['hubclientinfo'] };

/** The object id every probe asks for; no partner has it, so a well-formed "unknown object" answer is a pass. */
export const PROBE_OBJECT_ID = 'OCPI-HUB-CHECK-NONEXISTENT';

export interface CheckedParty {
  readonly countryCode: string;
  readonly partyId: string;
}

export interface PartnerCheckTarget {
  readonly versionsUrl: string;
  /** The partner's own token (CREDENTIALS_TOKEN_B), as the hub uses it on every call. */
  readonly token: string;
  readonly roles: readonly CheckedRole[];
  /** The party the probes address (OCPI-to). */
  readonly party: CheckedParty;
  /** The OCPI version to check: the version the party uses. */
  readonly version: string;
  /** Operator overrides of receiver URLs (hubctl endpoint set): deliveries use them, so the check does. */
  readonly overrides?: Readonly<Record<string, string>>;
}

export interface PartnerCheckOptions {
  readonly policy: OutboundPolicy;
  readonly timeoutMs: number;
  /** The hub's own party: OCPI-from of the probes and the sender in the probed object paths. */
  readonly hub: CheckedParty;
  /** Extra trusted CA certificates (PEM), e.g. a private CA; the system roots stay trusted too. */
  readonly ca?: string;
  /** A client to use instead of a fresh one (closed by its owner). */
  readonly client?: OcpiPartnerClient;
  readonly now?: () => Date;
}

export interface CheckLine {
  /** versions, version-details, module <id>, probe <id>, tls <host:port>. */
  readonly check: string;
  readonly ok: boolean;
  readonly reason: string;
  readonly url?: string;
  readonly rtt_ms?: number;
  readonly days_left?: number;
}

export interface PartnerCheckReport {
  readonly version: string;
  readonly roles: readonly CheckedRole[];
  readonly ok: boolean;
  readonly failures: number;
  readonly checked_at: string;
  readonly checks: readonly CheckLine[];
}

interface Envelope {
  status_code?: unknown;
  status_message?: unknown;
  timestamp?: unknown;
  data?: unknown;
}

/** A well-formed OCPI envelope (transport_and_format.asciidoc, Response format): integer status_code, string timestamp. */
function envelopeProblem(e: Envelope): string | undefined {
  if (typeof e.status_code !== 'number' || !Number.isInteger(e.status_code)) return 'answer has no integer status_code';
  if (typeof e.timestamp !== 'string') return 'answer has no timestamp';
  if (e.status_message !== undefined && e.status_message !== null && typeof e.status_message !== 'string') return 'status_message is not a string';
  return undefined;
}

const ms = (started: number) => Math.round(performance.now() - started);

/**
 * The GET each receiver is probed with (an object id no partner has), as its module declares it
 * (@hub/modules receiverProbe: the receiver's own GET of one object, or reachability only where a
 * receiver has no GET); a module that declares none is probed at the receiver's URL.
 */
export function probeOf(module: string, url: string, hub: CheckedParty): { url: string; needsEnvelope: boolean } {
  const base = url.replace(/\/+$/, '');
  // The identifier comes from the partner's version details: an own property only ("toString" is none).
  const probe = Object.hasOwn(ocpiModules, module) ? (ocpiModules as Record<string, OcpiModule>)[module]?.receiverProbe : undefined;
  if (!probe) return { url: base, needsEnvelope: true };
  return { url: `${base}${probe.path(hub, PROBE_OBJECT_ID)}`, needsEnvelope: probe.answersWithEnvelope !== false };
}

/**
 * Runs the check; never throws for a partner's fault (every fault is a failed line).
 * Long because: the check's steps in the order its report lists them (versions, version details and
 * receivers, TLS); each step reads what the one before found.
 */
export async function checkPartner(target: PartnerCheckTarget, options: PartnerCheckOptions): Promise<PartnerCheckReport> {
  const client = options.client ?? ocpiPartnerClient({ policy: options.policy, timeoutMs: options.timeoutMs, ...(options.ca ? { ca: options.ca } : {}) });
  const lines: CheckLine[] = [];
  const correlationId = randomUUID();
  const ids = { correlationId };
  const origins = new Map<string, URL>();
  const noteOrigin = (raw: string) => {
    try {
      // Only URLs the outbound policy allows get a handshake; a refused one is reported by its own check.
      const u = checkOutboundUrl(options.policy, raw);
      if (u.protocol === 'https:') origins.set(u.origin, u);
    } catch {
      // Reported by the check of the call that uses it.
    }
  };
  const failed = (e: unknown) => (e instanceof Error ? e.message : String(e));
  // The Authorization header follows the version checked (a 2.1.1 partner gets its token as it is).
  const wireVersion = isOcpiVersion(target.version) ? target.version : undefined;
  try {
    noteOrigin(target.versionsUrl);
    // Step 1: GET versions with the partner's token; it must list the version.
    let detailsUrl: string | undefined;
    let started = performance.now();
    try {
      const versions = await client.fetchVersions(target.versionsUrl, target.token, ids, wireVersion);
      const listed = versions.find((v) => v.version === target.version);
      if (listed) {
        detailsUrl = listed.url;
        lines.push({ check: 'versions', ok: true, reason: `lists ${target.version} (${versions.map((v) => v.version).join(', ')})`, url: target.versionsUrl, rtt_ms: ms(started) });
      } else {
        lines.push({ check: 'versions', ok: false, reason: `does not list ${target.version} (lists ${versions.map((v) => v.version).join(', ') || 'nothing'})`, url: target.versionsUrl, rtt_ms: ms(started) });
      }
    } catch (e) {
      lines.push({ check: 'versions', ok: false, reason: failed(e), url: target.versionsUrl, rtt_ms: ms(started) });
    }

    // Step 2: the version details list every receiver the roles must serve, at an allowed URL.
    const endpoints = new Map<string, string>();
    if (detailsUrl !== undefined) {
      noteOrigin(detailsUrl);
      started = performance.now();
      try {
        const details = await client.fetchVersionDetails(detailsUrl, target.token, ids, wireVersion);
        if (details.version !== target.version) {
          lines.push({ check: 'version-details', ok: false, reason: `details say version ${details.version}, not ${target.version}`, url: detailsUrl, rtt_ms: ms(started) });
        } else {
          lines.push({ check: 'version-details', ok: true, reason: `${details.endpoints.length} endpoints`, url: detailsUrl, rtt_ms: ms(started) });
        }
        // 2.1.1 endpoints have no role (version_information_endpoint.md, 2.1.1): each module has one URL.
        for (const e of details.endpoints) if (e.role === 'RECEIVER' || e.role === undefined) endpoints.set(e.identifier, e.url);
      } catch (e) {
        lines.push({ check: 'version-details', ok: false, reason: failed(e), url: detailsUrl, rtt_ms: ms(started) });
      }
    }
    const moduleList = REQUIRED_RECEIVERS[target.version];
    if (!moduleList) {
      lines.push({ check: 'modules', ok: false, reason: `the check has no module list for OCPI ${target.version} (it knows ${Object.keys(REQUIRED_RECEIVERS).join(', ')})` });
    } else if (detailsUrl !== undefined && lines.at(-1)?.check === 'version-details' && lines.at(-1)?.ok) {
      const required = [...new Set(target.roles.flatMap((r) => moduleList[r]))];
      const optional = (OPTIONAL_RECEIVERS[target.version] ?? []).filter((m) => !required.includes(m) && (endpoints.has(m) || target.overrides?.[m] !== undefined));
      for (const module of [...required, ...optional]) {
        const override = target.overrides?.[module];
        const url = override ?? endpoints.get(module);
        const whose = target.roles.filter((r) => moduleList[r].includes(module)).join('/') || 'optional';
        if (url === undefined) {
          lines.push({ check: `module ${module}`, ok: false, reason: `no ${module} RECEIVER in the version details (role ${whose} must serve it)` });
          continue;
        }
        try {
          checkOutboundUrl(options.policy, url);
        } catch (e) {
          lines.push({ check: `module ${module}`, ok: false, reason: `URL refused by the outbound policy: ${failed(e)}`, url });
          continue;
        }
        lines.push({ check: `module ${module}`, ok: true, reason: `${module} RECEIVER listed${override ? ' (operator override in use)' : ''}`, url });
        noteOrigin(url);
        lines.push(await probe(client, module, url, target, options, ids));
      }
    }

    // Step 3: TLS of every https origin met on the way.
    for (const url of origins.values()) lines.push(await inspectTls(url, { policy: options.policy, timeoutMs: options.timeoutMs, ...(options.ca ? { ca: options.ca } : {}), ...(options.now ? { now: options.now } : {}) }));
  } finally {
    if (!options.client) await client.close().catch(() => undefined);
  }
  const failures = lines.filter((l) => !l.ok).length;
  return { version: target.version, roles: target.roles, ok: failures === 0, failures, checked_at: (options.now ?? (() => new Date()))().toISOString(), checks: lines };
}

async function probe(client: OcpiPartnerClient, module: string, receiverUrl: string, target: PartnerCheckTarget, options: PartnerCheckOptions, ids: { correlationId: string }): Promise<CheckLine> {
  const { url, needsEnvelope } = probeOf(module, receiverUrl, options.hub);
  const check = `probe ${module}`;
  const started = performance.now();
  // 2.1.1 has no routing headers and takes the token as it is (transport_and_format.md, 2.1.1).
  const headers: Record<string, string> = target.version === '2.1.1'
    ? { authorization: authorizationHeader(target.token, '2.1.1') }
    : {
        'ocpi-from-country-code': options.hub.countryCode,
        'ocpi-from-party-id': options.hub.partyId,
        'ocpi-to-country-code': target.party.countryCode,
        'ocpi-to-party-id': target.party.partyId,
      };
  try {
    const { httpStatus, envelope } = await client.call('GET', url, target.token, ids, undefined, headers);
    const rtt = ms(started);
    if (httpStatus === 401 || httpStatus === 403) return { check, ok: false, reason: `HTTP ${httpStatus}: the receiver refused the partner's own token`, url, rtt_ms: rtt };
    if (httpStatus >= 500) return { check, ok: false, reason: `HTTP ${httpStatus}: the receiver failed`, url, rtt_ms: rtt };
    const problem = envelopeProblem(envelope);
    if (problem && needsEnvelope) return { check, ok: false, reason: `HTTP ${httpStatus}, not an OCPI envelope: ${problem}`, url, rtt_ms: rtt };
    return { check, ok: true, reason: `HTTP ${httpStatus}${problem ? ' (reachable; no GET in mod_commands.asciidoc, no envelope asked)' : `, OCPI status_code ${String((envelope as Envelope).status_code)}`}`, url, rtt_ms: rtt };
  } catch (e) {
    const rtt = ms(started);
    if (!needsEnvelope && e instanceof PartnerCallError && (e.reason === 'NOT_JSON' || e.reason === 'UNEXPECTED_BODY')) {
      return { check, ok: true, reason: 'reachable (no GET in mod_commands.asciidoc, so no envelope asked)', url, rtt_ms: rtt };
    }
    if (e instanceof PartnerCallError && (e.reason === 'NOT_JSON' || e.reason === 'UNEXPECTED_BODY')) return { check, ok: false, reason: `not an OCPI envelope: ${e.message}`, url, rtt_ms: rtt };
    return { check, ok: false, reason: e instanceof Error ? e.message : String(e), url, rtt_ms: rtt };
  }
}

/** One line per check, as hubctl prints them. */
export function formatCheckLines(report: PartnerCheckReport): string {
  const lines = report.checks.map((l) => `${l.ok ? 'pass' : 'FAIL'}  ${l.check.padEnd(24)} ${l.reason}${l.rtt_ms === undefined ? '' : ` (${l.rtt_ms} ms)`}${l.url ? `  ${l.url}` : ''}`);
  lines.push(report.ok ? `all ${report.checks.length} checks passed (OCPI ${report.version}, ${report.roles.join('+')})` : `${report.failures} of ${report.checks.length} checks failed (OCPI ${report.version}, ${report.roles.join('+')})`);
  return lines.join('\n');
}

/** The first failure, as a status line shows it. */
export function firstFailure(report: Pick<PartnerCheckReport, 'checks'>): string | undefined {
  const f = report.checks.find((l) => !l.ok);
  return f ? `${f.check}: ${f.reason}` : undefined;
}

/** A registered partner as the registry holds it (packages/store, partnerCheckSubjects). */
export interface RegisteredPartner {
  readonly versionsUrl: string;
  readonly partnerTokenSealed: Buffer;
  /** The version of its last credentials exchange; the check defaults to it. */
  readonly version: string | undefined;
  readonly parties: ReadonlyArray<{ readonly countryCode: string; readonly partyId: string; readonly role: CheckedRole }>;
  readonly overrides: Readonly<Record<string, string>>;
}

/** Checks a registered partner's platform for every role of its parties, at `version` or the version it uses. */
export function checkRegisteredPartner(partner: RegisteredPartner, openToken: (sealed: Buffer) => string, options: PartnerCheckOptions, version?: string): Promise<PartnerCheckReport> {
  const roles = [...new Set(partner.parties.map((p) => p.role))].sort();
  const first = partner.parties[0] ?? { countryCode: '', partyId: '' };
  return checkPartner(
    {
      versionsUrl: partner.versionsUrl,
      token: openToken(partner.partnerTokenSealed),
      roles,
      party: { countryCode: first.countryCode, partyId: first.partyId },
      version: version ?? partner.version ?? OCPI_VERSION,
      overrides: partner.overrides,
    },
    options,
  );
}
