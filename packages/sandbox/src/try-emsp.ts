// `npm run sandbox -- try-emsp --party CC/PID --token <initial token>`: a partner eMSP simulator for
// a newcomer (docs/how-to/sandbox.md). It is a real OCPI 2.2.1 platform on a free port: it exchanges
// credentials with the initial token hubctl printed, waits for the sandbox routing, pulls locations,
// sends START_SESSION to the sandbox CPO, prints the session as it arrives, stops it and prints the
// CDR, then exits. Arguments only: it reads no environment.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import express from 'express';
import { createLogger } from '@hub/observability';
import { joinOptionValues } from './cli-args.ts';
import { SandboxEmsp } from './emsp.ts';
import type { Json } from './platform.ts';

const { values } = parseArgs({
  args: joinOptionValues(process.argv.slice(2), ['token']),
  options: {
    party: { type: 'string' },
    token: { type: 'string' },
    hub: { type: 'string', default: 'http://127.0.0.1:8090' },
    cpo: { type: 'string', default: 'NL/SBX' },
    updates: { type: 'string', default: '3' },
  },
});
const fail = (message: string): never => {
  process.stderr.write(`try-emsp: ${message}\n`);
  process.exit(2);
};
const [countryCode = '', partyId = ''] = (values.party ?? fail('--party CC/PID (the eMSP you registered) is required')).toUpperCase().split('/');
const initialToken = values.token ?? fail('--token <the initial token hubctl party register printed> is required');
const [cpoCountry = '', cpoParty = ''] = values.cpo.toUpperCase().split('/');
const cpo = { countryCode: cpoCountry, partyId: cpoParty };
const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) return fail(`gave up waiting for ${what} after ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

const app = express();
const server = await new Promise<Server>((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const emsp = new SandboxEmsp({ hubUrl: values.hub.replace(/\/+$/, ''), baseUrl: base, party: { countryCode, partyId }, logger: createLogger({ service: 'try-emsp', level: 'error' }), timeoutMs: 15_000 }, { pullEveryMs: 60_000 });
app.use(emsp.router);
try {
  say(`your eMSP ${countryCode}/${partyId} listens at ${base}/ocpi/versions`);
  // credentials.asciidoc, Registration: POST our credentials with the initial token.
  const answer = await emsp.callHub('POST', '/ocpi/2.2.1/credentials', {
    token: initialToken,
    body: { token: emsp.offeredToken, url: emsp.versionsUrl, roles: [{ role: 'EMSP', country_code: countryCode, party_id: partyId, business_details: { name: 'try-emsp' } }] },
  });
  const hubToken = (answer.body?.data as { token?: unknown } | undefined)?.token;
  if (answer.body?.status_code !== 1000 || typeof hubToken !== 'string') fail(`credentials exchange refused: HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
  emsp.credentials = { ownToken: emsp.offeredToken, hubToken: String(hubToken) };
  say(`1. credentials exchanged (hub says X-Hub-Environment: ${answer.headers.get('x-hub-environment') ?? 'none'})`);
  const locations = await until('the sandbox routing and the sandbox CPO locations', async () => {
    const { locations: n } = await emsp.pull();
    return n > 0 && emsp.pulled.locations.some((l) => l['id'] === 'SBX-LOC-1') ? n : undefined;
  }, 30_000);
  say(`2. routed to the sandbox CPO; pulled ${locations} locations and ${emsp.pulled.tariffs.length} tariff(s)`);
  const start = await emsp.sendCommand(cpo, 'START_SESSION', { location_id: 'SBX-LOC-1', evse_uid: 'SBX-EVSE-1' });
  say(`3. START_SESSION at SBX-LOC-1/SBX-EVSE-1: ${JSON.stringify(start.answer.body?.data)}`);
  const startResult = await until('the START_SESSION result', () => emsp.commandResults.get(start.commandId), 30_000);
  say(`   result: ${JSON.stringify(startResult)}`);
  const seen = new Set<string>();
  let session: Json | undefined;
  const wanted = Number(values.updates);
  await until('the session to grow', () => {
    for (const s of emsp.sessions.values()) {
      const line = `${String(s['status'])} ${String(s['kwh'])} kWh`;
      if (!seen.has(line)) {
        seen.add(line);
        say(`4. session ${String(s['id'])}: ${line}`);
      }
      session = s;
    }
    return session && session['status'] === 'ACTIVE' && seen.size > wanted ? session : undefined;
  }, 120_000);
  const stop = await emsp.sendCommand(cpo, 'STOP_SESSION', { session_id: String(session?.['id']) });
  say(`5. STOP_SESSION: ${JSON.stringify(stop.answer.body?.data)}`);
  const cdr = await until('the CDR', () => [...emsp.cdrs.values()].find((c) => c['session_id'] === session?.['id']), 60_000);
  say(`6. CDR ${String(cdr['id'])}: ${String(cdr['total_energy'])} kWh, ${String(cdr['total_time'])} h, total_cost ${JSON.stringify(cdr['total_cost'])} ${String(cdr['currency'])}`);
  say('done: a whole session ended in a CDR at your eMSP. Your credentials stay registered; the sandbox keeps routing you.');
} finally {
  emsp.stop();
  server.closeAllConnections();
  server.close();
}
