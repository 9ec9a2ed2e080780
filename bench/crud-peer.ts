// The CRUD peer of the durable PATCH: what a user might build instead of an
// event-sourced hub, a plain express + pg service that writes the merged Location straight to
// Postgres. Kept as honest as the comparison needs: the same token hash lookup (the hub's cached
// caller lookup), the same ownership rule, the same JSON Schema validation of the same body, the same
// merge (applyLocationEvent), one synchronous commit per request (synchronous_commit on, the server
// default) and the same pool size as the ingress's main pool. It is NOT a hub: no Kafka, no event log,
// no read model generations, no list, no delivery to anyone, no rate limits, no access log.
// Run by location-patch.bench.ts: node bench/crud-peer.ts PORT (DATABASE_URL in the environment).
import express, { type NextFunction, type Request, type Response } from 'express';
import { locationEventTypes } from '@hub/events';
import { credentialsTokenCandidates, hashCredentialsToken, sameParty } from '@hub/ocpi';
import type { Caller, ObjectPath } from '@hub/core';
import { applyLocationEvent } from '@hub/modules';
import { createSchemaValidator } from '@hub/schemas';
import { cachedCallerLookup, createPool, postgresRegistryStore } from '@hub/store';
import type { SqlPool } from '@hub/testing';

type Json = Record<string, unknown>;
const databaseUrl = process.env['DATABASE_URL'] ?? '';
// The hub's pool (its session settings), held as the pg Pool it is: the peer runs its own SQL, as a
// plain pg service would.
const pool = createPool(databaseUrl, { application: 'bench-crud-peer', max: 20, onIdleError: () => undefined }) as SqlPool;
const callers = await cachedCallerLookup(postgresRegistryStore(pool), { databaseUrl });
const validator = createSchemaValidator();

/** The peer's one table: the Location document by its key, and last_updated for a date_from list. */
const PEER_TABLE = `
  create table if not exists peer_locations (
    country_code text not null, party_id text not null, id text not null,
    last_updated timestamptz not null, document jsonb not null,
    primary key (country_code, party_id, id));
  create index if not exists peer_locations_last_updated on peer_locations (last_updated)`;
await pool.query(PEER_TABLE);

const reply = (res: Response, http: number, statusCode: number, message: string) =>
  res.status(http).json({ status_code: statusCode, status_message: message, timestamp: new Date().toISOString() });

async function authenticate(req: Request, res: Response, next: NextFunction): Promise<void> {
  for (const token of credentialsTokenCandidates(req.headers.authorization)) {
    const hash = hashCredentialsToken(token);
    const caller = callers.peek(hash) ?? (await callers.find(hash));
    if (caller && caller.tokenKind !== 'INITIAL') {
      res.locals['caller'] = caller;
      return next();
    }
  }
  reply(res, 401, 2000, 'unknown token');
}

function patch(level: 'evse' | 'connector') {
  const schema = level === 'evse' ? 'ocpi/evse.json' : 'ocpi/connector.json';
  const type = level === 'evse' ? locationEventTypes.evsePatched : locationEventTypes.connectorPatched;
  return async (req: Request, res: Response): Promise<void> => {
    const { cc = '', pid = '', id = '', evseUid, connectorId } = req.params as Record<string, string | undefined>;
    const path: ObjectPath = { countryCode: cc.toUpperCase(), partyId: pid.toUpperCase(), id: id.toUpperCase(), ...(evseUid ? { evseUid } : {}), ...(connectorId ? { connectorId } : {}) };
    const caller = res.locals['caller'] as Caller;
    if (!caller.parties.some((p) => p.role === 'CPO' && !p.suspended && sameParty(p, path))) return void reply(res, 403, 2000, 'foreign party');
    const { document, violations } = validator.validatePartial(schema, req.body);
    if (violations.length > 0 || typeof (document as Json)['last_updated'] !== 'string') return void reply(res, 400, 2001, 'invalid body');
    // Read, merge and write in one transaction (the row lock orders concurrent PATCHes of a location).
    const client = await pool.connect();
    try {
      await client.query('begin');
      const { rows } = await client.query<{ document: Json }>('select document from peer_locations where country_code = $1 and party_id = $2 and id = $3 for update', [path.countryCode, path.partyId, path.id]);
      const result = applyLocationEvent(rows[0]?.document, type, path, document as Json);
      if (result.kind !== 'upsert') {
        await client.query('rollback');
        return void reply(res, 404, 2003, result.kind === 'rejected' ? result.reason : 'gone');
      }
      await client.query(
        `insert into peer_locations (country_code, party_id, id, last_updated, document) values ($1, $2, $3, $4, $5)
         on conflict (country_code, party_id, id) do update set last_updated = excluded.last_updated, document = excluded.document`,
        [path.countryCode, path.partyId, path.id, result.document['last_updated'], result.document],
      );
      await client.query('commit');
      reply(res, 200, 1000, 'Success');
    } catch (e) {
      await client.query('rollback').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  };
}

const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.use(express.json({ limit: '1mb' }));
app.use((req, res, next) => void authenticate(req, res, next).catch(next));
const patchEvse = patch('evse');
const patchConnector = patch('connector');
app.patch('/ocpi/2.2.1/locations/:cc/:pid/:id/:evseUid', (req, res, next) => void patchEvse(req, res).catch(next));
app.patch('/ocpi/2.2.1/locations/:cc/:pid/:id/:evseUid/:connectorId', (req, res, next) => void patchConnector(req, res).catch(next));
const server = app.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => void callers.close().then(() => pool.end()).then(() => process.exit(0))));
