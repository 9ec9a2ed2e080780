import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { PartnerCallError } from '@hub/registry';

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
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) {
  special.addSubnet(net, prefix, 'ipv6');
}

/** True for addresses a partner call must not reach without an operator allow-list entry. */
export function isSpecialAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return special.check(mapped[1], 'ipv4');
  const family = isIP(address);
  if (family === 4) return special.check(address, 'ipv4');
  if (family === 6) return special.check(address, 'ipv6');
  return true;
}

function hostAllowed(policy: OutboundPolicy, host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return policy.allowedHosts.some((a) => a.toLowerCase() === h);
}

/** Checks a URL before any call; throws PartnerCallError('URL_NOT_ALLOWED') with the reason. */
export function checkOutboundUrl(policy: OutboundPolicy, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PartnerCallError('URL_NOT_ALLOWED', raw, `not a URL: ${raw}`);
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    throw new PartnerCallError('URL_NOT_ALLOWED', raw, `only https URLs are allowed, got ${url.protocol}//${url.host}`);
  }
  if (url.username || url.password) throw new PartnerCallError('URL_NOT_ALLOWED', raw, 'URLs with user info are not allowed');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && isSpecialAddress(host) && !hostAllowed(policy, host)) {
    throw new PartnerCallError('URL_NOT_ALLOWED', raw, `address ${host} is loopback, private or link-local`);
  }
  const name = host.toLowerCase().replace(/\.$/, '');
  if ((name === 'localhost' || name.endsWith('.localhost')) && !hostAllowed(policy, host)) {
    throw new PartnerCallError('URL_NOT_ALLOWED', raw, 'localhost is not allowed');
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
          const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${bad.address}, a loopback, private or link-local address`);
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
