import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { PartnerCallError } from '@hub/core';

// Every URL the hub calls is one a partner registered (credentials, endpoints) or the operator set;
// even so, the hub never calls loopback, link-local, private or otherwise special addresses unless the
// operator allow-listed the host, and only https unless plain http is switched on for development.
// The check runs on the URL and again on every address DNS returns, so a name that resolves to
// 127.0.0.1 or 169.254.169.254 is refused as well.

export interface OutboundPolicy {
  /** Plain http allowed (development and tests only). */
  readonly allowHttp: boolean;
  /** Hosts (names or IP literals) allowed even though they are loopback or private. */
  readonly allowedHosts: readonly string[];
}

const special = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) special.addSubnet(net, prefix, 'ipv4');
// IPv6 ranges special in themselves (IANA IPv6 Special-Purpose Address Registry). The local-use NAT64
// prefix 64:ff9b:1::/48 (RFC 8215) is translated inside some operator's network, whatever it embeds.
for (const [net, prefix] of [['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b:1::', 48], ['100::', 64], ['2001:db8::', 32]] as const) {
  special.addSubnet(net, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 literal (a trailing dotted quad included); undefined if it is none. */
function ipv6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  const groups = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 ? groups : undefined;
}

const quad = (hi: number, lo: number): string => `${hi >>> 8}.${hi & 0xff}.${lo >>> 8}.${lo & 0xff}`;

/**
 * The IPv4 address an IPv6 address carries, when it is of a form that reaches that IPv4 address:
 * IPv4-compatible ::/96 and IPv4-mapped ::ffff:0:0/96 (RFC 4291 2.5.5), IPv4-translated, NAT64 64:ff9b::/96 (RFC 6052),
 * 6to4 2002::/16 (RFC 3056: bits 16-47) and Teredo 2001::/32 (RFC 4380: the client is bits 96-127,
 * inverted).
 */
export function embeddedIpv4(groups: readonly number[]): string | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const zeroTo = (n: number) => groups.slice(0, n).every((g) => g === 0);
  if (zeroTo(5) && (g5 === 0 || g5 === 0xffff)) return quad(g6, g7);
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return quad(g6, g7); // IPv4-translated ::ffff:0:0:0/96 (RFC 2765)
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return quad(g6, g7);
  if (g0 === 0x2002) return quad(g1, g2);
  if (g0 === 0x2001 && g1 === 0) return quad(~g6 & 0xffff, ~g7 & 0xffff);
  return undefined;
}

/** True for addresses a partner call must not reach without an operator allow-list entry. */
export function isSpecialAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return special.check(address, 'ipv4');
  if (family !== 6) return true;
  // An IPv6 form that embeds an IPv4 address is judged by that address.
  const groups = ipv6Groups(address);
  if (!groups) return true;
  const v4 = embeddedIpv4(groups);
  if (v4 !== undefined && special.check(v4, 'ipv4')) return true;
  return special.check(address, 'ipv6');
}

function hostAllowed(policy: OutboundPolicy, host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return policy.allowedHosts.some((a) => a.toLowerCase() === h);
}

/**
 * What lifts a refusal that a development switch exists for: the partner sees it in status_message, so
 * whoever runs a test hub learns the setting instead of guessing (a calm, honest start).
 */
const HTTP_SWITCH = 'a development hub allows http with ALLOW_HTTP_PARTNER_URLS=true';
const HOSTS_SWITCH = "the hub's operator can allow the host with PARTNER_ALLOWED_HOSTS";

/** Checks a URL before any call; throws PartnerCallError('URL_NOT_ALLOWED') with the reason. */
export function checkOutboundUrl(policy: OutboundPolicy, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PartnerCallError('URL_NOT_ALLOWED', raw, `not a URL: ${raw}`);
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    throw new PartnerCallError('URL_NOT_ALLOWED', raw, `only https URLs are allowed, got ${url.protocol}//${url.host}${url.protocol === 'http:' ? ` (${HTTP_SWITCH})` : ''}`);
  }
  if (url.username || url.password) throw new PartnerCallError('URL_NOT_ALLOWED', raw, 'URLs with user info are not allowed');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && isSpecialAddress(host) && !hostAllowed(policy, host)) {
    throw new PartnerCallError('URL_NOT_ALLOWED', raw, `address ${host} is loopback, private or link-local (${HOSTS_SWITCH})`);
  }
  const name = host.toLowerCase().replace(/\.$/, '');
  if ((name === 'localhost' || name.endsWith('.localhost')) && !hostAllowed(policy, host)) {
    throw new PartnerCallError('URL_NOT_ALLOWED', raw, `localhost is not allowed (${HOSTS_SWITCH})`);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A dns.lookup for the HTTP client that refuses special addresses of non-allow-listed names. */
export function guardedLookup(policy: OutboundPolicy) {
  return (hostname: string, options: object, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses;
      if (!hostAllowed(policy, hostname)) {
        const bad = list.find((a) => isSpecialAddress(a.address));
        if (bad) {
          const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${bad.address}, a loopback, private or link-local address (${HOSTS_SWITCH})`);
          e.code = 'EHUBBLOCKED';
          return callback(e, []);
        }
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
