import { checkServerIdentity, connect, rootCertificates, type PeerCertificate } from 'node:tls';
import { guardedLookup, type OutboundPolicy } from './outbound-policy.ts';
import type { CheckLine } from './partner-check.ts';

// The TLS line of the partner check (docs/how-to/partner-check.md): the certificate an https origin
// presents, judged for its host under the trusted roots, with the days it has left.

/** Certificates with fewer days left than this are reported (still a pass). */
export const CERT_WARN_DAYS = 14;

const ms = (started: number) => Math.round(performance.now() - started);

/** TLS of one https origin: chain valid for the host under the trusted roots, and days to expiry. */
export async function inspectTls(url: URL, options: { policy: OutboundPolicy; timeoutMs: number; ca?: string; now?: () => Date }): Promise<CheckLine> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);
  const check = `tls ${url.host}`;
  const started = performance.now();
  return new Promise<CheckLine>((resolve) => {
    const socket = connect({
      host,
      port,
      // SNI is for names only (RFC 6066, 3).
      ...(/^[\d.]+$|:/.test(host) ? {} : { servername: host }),
      rejectUnauthorized: false,
      lookup: guardedLookup(options.policy),
      // An extra CA adds to the system roots rather than replacing them.
      ...(options.ca ? { ca: [...rootCertificates, options.ca] } : {}),
      timeout: options.timeoutMs,
    });
    const done = (line: CheckLine) => {
      socket.destroy();
      resolve(line);
    };
    socket.once('timeout', () => done({ check, ok: false, reason: `no TLS handshake within ${options.timeoutMs} ms`, url: url.origin }));
    socket.once('error', (e: Error) => done({ check, ok: false, reason: `TLS connection failed: ${e.message}`, url: url.origin }));
    socket.once('secureConnect', () => {
      const rtt = ms(started);
      const cert: PeerCertificate = socket.getPeerCertificate();
      const now = (options.now ?? (() => new Date()))();
      const daysLeft = cert.valid_to ? Math.floor((Date.parse(cert.valid_to) - now.getTime()) / 86_400_000) : undefined;
      const base = { check, url: url.origin, rtt_ms: rtt, ...(daysLeft === undefined ? {} : { days_left: daysLeft }) };
      // Node's own verdict includes the host name check; the name is checked first for a clearer reason.
      const identity = checkServerIdentity(host, cert);
      if (identity) return done({ ...base, ok: false, reason: `certificate is not valid for ${host} (it is for ${cert.subjectaltname || `CN=${String(cert.subject?.CN)}`})` });
      if (!socket.authorized) return done({ ...base, ok: false, reason: `certificate not trusted: ${String(socket.authorizationError)}` });
      if (daysLeft === undefined || daysLeft < 0) return done({ ...base, ok: false, reason: `certificate expired (${cert.valid_to})` });
      done({ ...base, ok: true, reason: `certificate valid for ${host}, ${daysLeft} days left${daysLeft < CERT_WARN_DAYS ? ' (renew soon)' : ''}` });
    });
  });
}


