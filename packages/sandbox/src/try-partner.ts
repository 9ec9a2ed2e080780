// `npm run partner -- cpo|emsp --party CC/PID --token <initial token> [--hub URL]`: a partner
// platform for a newcomer's first session on any hub (README, Your first session). It is a real OCPI
// 2.2.1 platform on a free port: it exchanges credentials with the initial token hubctl printed
// (credentials.asciidoc, Registration), then as a CPO pushes one location with its EVSEs and
// connectors (mod_locations.asciidoc, Receiver interface PUT), or as an eMSP pulls the locations it
// is routed to (Sender interface GET, every page) and prints them; then it exits. Arguments only: it
// reads no environment.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import express from 'express';
import { createLogger } from '@hub/observability';
import { joinOptionValues } from './cli-args.ts';
import { DEFAULT_CPO_TIMING, SandboxCpo } from './cpo.ts';
import { SandboxEmsp } from './emsp.ts';
import { sandboxLocations } from './fixtures.ts';
import type { Json, OcpiPlatform, PlatformDeps } from './platform.ts';

const { values, positionals } = parseArgs({
  args: joinOptionValues(process.argv.slice(2), ['token']),
  allowPositionals: true,
  options: {
    party: { type: 'string' },
    token: { type: 'string' },
    hub: { type: 'string', default: 'http://127.0.0.1:8080' },
    wait: { type: 'string', default: '30' },
  },
});
const fail = (message: string): never => {
  process.stderr.write(`partner: ${message}\n`);
  process.exit(2);
};
const role = (positionals[0] ?? '').toUpperCase();
if (role !== 'CPO' && role !== 'EMSP') fail('the first argument is cpo or emsp');
const [countryCode = '', partyId = ''] = (values.party ?? fail('--party CC/PID (the party you registered) is required')).toUpperCase().split('/');
const initialToken = values.token ?? fail('--token <the initial token hubctl party register printed> is required');
const waitMs = Number(values.wait) * 1000;
const say = (line: string) => process.stdout.write(`${line}\n`);

const app = express();
const server = await new Promise<Server>((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const deps: PlatformDeps = {
  hubUrl: values.hub.replace(/\/+$/, ''),
  baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  party: { countryCode, partyId },
  logger: createLogger({ service: 'partner', level: 'error' }),
  timeoutMs: 15_000,
};

/** credentials.asciidoc, Registration: POST our credentials with the initial token; keep the hub's token. */
async function exchangeCredentials(platform: OcpiPlatform): Promise<void> {
  const answer = await platform.callHub('POST', '/ocpi/2.2.1/credentials', {
    token: initialToken,
    body: { token: platform.offeredToken, url: platform.versionsUrl, roles: [{ role, country_code: countryCode, party_id: partyId, business_details: { name: `example ${role}` } }] },
  });
  const hubToken = (answer.body?.data as { token?: unknown } | undefined)?.token;
  if (answer.body?.status_code !== 1000 || typeof hubToken !== 'string') fail(`credentials exchange refused: HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
  platform.credentials = { ownToken: platform.offeredToken, hubToken: String(hubToken) };
  say(`credentials exchanged: ${role} ${countryCode}/${partyId} is connected to ${deps.hubUrl} (its OCPI platform listens at ${platform.versionsUrl})`);
}

const describeLocation = (l: Json) => {
  const evses = Array.isArray(l['evses']) ? (l['evses'] as Json[]) : [];
  const connectors = evses.reduce((n, e) => n + (Array.isArray(e['connectors']) ? (e['connectors'] as unknown[]).length : 0), 0);
  const name = typeof l['name'] === 'string' ? l['name'] : '';
  return `${String(l['country_code'])}/${String(l['party_id'])}/${String(l['id'])} "${name}", ${evses.length} EVSEs, ${connectors} connectors`;
};

try {
  if (role === 'CPO') {
    const cpo = new SandboxCpo(deps, DEFAULT_CPO_TIMING);
    app.use(cpo.router);
    await exchangeCredentials(cpo);
    const [location] = sandboxLocations({ countryCode, partyId }, new Date().toISOString());
    if (!location) fail('no example location');
    const path = `/ocpi/2.2.1/locations/${countryCode}/${partyId}/${String(location?.['id'])}`;
    const answer = await cpo.callHub('PUT', path, { body: location });
    if (answer.body?.status_code !== 1000) fail(`location push refused: HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
    say(`location pushed: ${describeLocation(location as Json)}`);
  } else {
    const emsp = new SandboxEmsp(deps, { pullEveryMs: 60_000 });
    app.use(emsp.router);
    await exchangeCredentials(emsp);
    // The hub projects pushes asynchronously; a location pushed a moment ago may take a moment.
    const deadline = Date.now() + waitMs;
    let locations: Json[] = [];
    while (locations.length === 0 && Date.now() < deadline) {
      locations = await emsp.pullAll('/ocpi/2.2.1/locations?limit=100');
      if (locations.length === 0) await new Promise((r) => setTimeout(r, 500));
    }
    if (locations.length === 0) fail(`no location to pull after ${waitMs / 1000} s: is the eMSP routed to a CPO that pushed one (hubctl routing list)?`);
    say(`locations pulled: ${locations.length}`);
    for (const l of locations) say(`  ${describeLocation(l)}`);
  }
} finally {
  server.close();
  server.closeAllConnections();
}
