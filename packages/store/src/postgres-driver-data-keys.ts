import { kindsWhere, moduleOfDelivery, pathSubject, tokenObjectId, type PersonalObjectKind } from '@hub/modules';
import type { DataKey, DriverDataKeys, DriverToken, ErasureResult } from '@hub/core';
import { erasePersonalFields, type DriverDataKeyring } from '@hub/registry';
import { pgPool, type PoolClient } from './pg-pool.ts';
import type { Database } from './pool.ts';

// Which delivery rows hold a driver's data, from the module table (decision 0016): the rows of the
// objects that are the driver's token (the tokens module's, whose events name it by their subject),
// and those whose object names the eMSP by the driver's cdr_token (sessions, CDRs).
const TOKEN_KINDS = kindsWhere((_rule, module) => module.personalData?.driverToken === 'subject');
const DRIVER_NAMED_BY_CDR_TOKEN = kindsWhere((rule) => rule.emspNamedBy === 'cdr_token');

/** The object whose personal fields a delivery row of `kind` holds. */
function personalObjectOf(kind: string): PersonalObjectKind {
  const object = moduleOfDelivery(kind as Parameters<typeof moduleOfDelivery>[0]).personalData?.object;
  if (!object) throw new Error(`deliveries of ${kind} hold no personal data`);
  return object as PersonalObjectKind;
}

// The key table of drivers' tokens (migration 030, docs/decisions/0013-erasure-by-destroying-data-keys.md):
// the ingress gets or creates a token's data key before it seals the personal fields of an event;
// readers (projector, dispatcher, hubctl replay) find a key by the id the event names. Keys are
// cached in memory for `ttlMs` (the ingress's hot path pays one query per token and TTL, not per
// push); a key erased elsewhere is therefore still usable by a running reader for at most that long,
// which is why `hubctl erase token` scrubs the plain copies a second time after it.

export interface DriverDataKeysOptions {
  readonly ttlMs: number;
  readonly maxEntries: number;
  readonly now?: () => number;
}

/** How long a service may keep using a data key after it was destroyed elsewhere (its cache's TTL). */
export const DRIVER_DATA_KEY_CACHE_MS = 30_000;

export function postgresDriverDataKeys(db: Database, keyring: DriverDataKeyring, options: DriverDataKeysOptions = { ttlMs: DRIVER_DATA_KEY_CACHE_MS, maxEntries: 100_000 }): DriverDataKeys {
  const pool = pgPool(db);
  const now = options.now ?? Date.now;
  const byRef = new Map<string, { key: DataKey; until: number }>();
  const byId = new Map<string, { key: Buffer | undefined; until: number }>();
  const remember = <V>(cache: Map<string, V>, k: string, v: V) => {
    cache.delete(k);
    cache.set(k, v);
    if (cache.size > options.maxEntries) cache.delete(cache.keys().next().value as string);
  };
  return {
    async keyFor(token) {
      const ref = keyring.tokenRef(token);
      const cacheKey = ref.toString('base64');
      const hit = byRef.get(cacheKey);
      if (hit && hit.until > now()) return hit.key;
      const fresh = keyring.newDataKey();
      // Two replicas creating the same token's key at once: the first insert wins, both use its key.
      const { rows } = await pool.query<{ key_id: string; wrapped_key: Buffer }>(
        `with created as (
           insert into driver_data_keys (token_ref, key_id, wrapped_key) values ($1, $2, $3)
           on conflict (token_ref) do nothing returning key_id, wrapped_key)
         select key_id, wrapped_key from created
         union all select key_id, wrapped_key from driver_data_keys where token_ref = $1 and not exists (select 1 from created)`,
        [ref, fresh.wrapped.keyId, fresh.wrapped.wrapped],
      );
      // Under READ COMMITTED a concurrent insert of the same token_ref makes this one do nothing once
      // the other commits, while the select sees the snapshot from before it: neither row. A second
      // statement has a new snapshot and sees the committed key.
      let row = rows[0];
      for (let attempt = 0; !row && attempt < 3; attempt++) {
        row = (await pool.query<{ key_id: string; wrapped_key: Buffer }>('select key_id, wrapped_key from driver_data_keys where token_ref = $1', [ref])).rows[0];
      }
      if (!row) throw new Error('driver data key neither created nor found');
      const key = row.key_id === fresh.wrapped.keyId ? { keyId: row.key_id, plain: fresh.plain } : { keyId: row.key_id, plain: keyring.unwrap({ keyId: row.key_id, wrapped: row.wrapped_key }) };
      remember(byRef, cacheKey, { key, until: now() + options.ttlMs });
      remember(byId, key.keyId, { key: key.plain, until: now() + options.ttlMs });
      return key;
    },

    async keyById(keyId) {
      const hit = byId.get(keyId);
      if (hit && hit.until > now()) return hit.key;
      const { rows } = await pool.query<{ wrapped_key: Buffer }>('select wrapped_key from driver_data_keys where key_id = $1::uuid', [keyId]);
      const key = rows[0] ? keyring.unwrap({ keyId, wrapped: rows[0].wrapped_key }) : undefined;
      remember(byId, keyId, { key, until: now() + options.ttlMs });
      return key;
    },
  };
}

type Json = Record<string, unknown>;

/**
 * Erases a driver's token (`hubctl erase token`): deletes its data key and, in the same transaction,
 * replaces the personal fields of every plain copy in Postgres with ERASED_PLACEHOLDER: the token in
 * every generation of the tokens read model (its row id becomes `<key id>|TYPE`, so it stays one
 * token and the counts stay), the token's delivery rows, and the session and CDR delivery rows and
 * CDRs as received whose cdr_token is this token (by eMSP, uid and type, or by its contract_id, which
 * is how an OCPI 2.1.1 CPO names it: auth_id). Every other field and every row count is unchanged.
 */
export async function eraseDriverToken(db: Database, keyring: DriverDataKeyring, token: DriverToken): Promise<ErasureResult> {
  const pool = pgPool(db);
  const client = await pool.connect();
  try {
    await client.query('begin');
    const deleted = await client.query<{ key_id: string }>('delete from driver_data_keys where token_ref = $1 returning key_id', [keyring.tokenRef(token)]);
    const keyId = deleted.rows[0]?.key_id;
    const cc = token.countryCode.toUpperCase();
    const pid = token.partyId.toUpperCase();
    const objectId = tokenObjectId(token.uid, token.type).toUpperCase();
    const type = token.type.toUpperCase();
    const replacementId = tokenObjectId(keyId ?? crypto.randomUUID(), token.type);

    const tokens = await client.query<{ generation: number; id: string; document: Json }>(
      'select generation, id, document from tokens where country_code = $1 and party_id = $2 and upper(id) = $3 for update',
      [cc, pid, objectId],
    );
    const contractIds = new Set(tokens.rows.map((r) => r.document.contract_id).filter((c): c is string => typeof c === 'string').map((c) => c.toUpperCase()));
    for (const row of tokens.rows) {
      await client.query('update tokens set id = $4, document = $5 where generation = $1 and country_code = $2 and party_id = $3 and id = $6', [
        row.generation, cc, pid, replacementId, JSON.stringify(erasePersonalFields('token', row.document)), row.id,
      ]);
    }

    // Token events the projector could not apply name the token in their subject.
    await client.query(`update projection_rejects set subject = $2 where model = 'tokens' and upper(subject) = upper($1)`, [
      pathSubject({ countryCode: cc, partyId: pid, id: tokenObjectId(token.uid, token.type) }), pathSubject({ countryCode: cc, partyId: pid, id: replacementId }),
    ]);

    // Token delivery rows: payload scrubbed, object id pseudonymous like the read model's.
    const tokenDeliveries = await client.query<{ id: string; payload: Json }>(
      `select id, payload from deliveries where kind in (${TOKEN_KINDS}) and emsp_country_code = $1 and emsp_party_id = $2 and upper(object_id) = $3 for update`,
      [cc, pid, objectId],
    );
    for (const row of tokenDeliveries.rows) {
      await client.query('update deliveries set payload = $2, object_id = $3, last_error = null where id = $1', [row.id, JSON.stringify(erasePersonalFields('token', row.payload)), replacementId.toUpperCase()]);
    }

    const { objectDeliveryRows, cdrRows } = await scrubSessionsAndCdrs(client, [cc, pid, token.uid.toUpperCase(), type, [...contractIds]]);
    await client.query('commit');
    return { keyDestroyed: keyId !== undefined, tokenRows: tokens.rows.length, deliveryRows: tokenDeliveries.rows.length + objectDeliveryRows, cdrRows };
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * The session and CDR deliveries, and the CDRs as received, whose cdr_token is the driver's token
 * (params: country code, party id, uid, type, contract ids), with their personal fields erased.
 */
async function scrubSessionsAndCdrs(client: PoolClient, params: [string, string, string, string, string[]]): Promise<{ objectDeliveryRows: number; cdrRows: number }> {
  const driverOf = `(upper(d->'cdr_token'->>'country_code') = $1 and upper(d->'cdr_token'->>'party_id') = $2 and upper(d->'cdr_token'->>'uid') = $3 and upper(coalesce(d->'cdr_token'->>'type', 'RFID')) = $4)
     or upper(d->'cdr_token'->>'contract_id') = any($5::text[]) or upper(d#>>'{hub_version_fields,2.1.1,kept,auth_id}') = any($5::text[])`;
  const objectDeliveries = await client.query<{ id: string; kind: string; payload: Json }>(
    `select id, kind, payload from deliveries, lateral (select payload as d) x where kind in (${DRIVER_NAMED_BY_CDR_TOKEN}) and (${driverOf}) for update of deliveries`,
    params,
  );
  for (const row of objectDeliveries.rows) {
    await client.query('update deliveries set payload = $2 where id = $1', [row.id, JSON.stringify(erasePersonalFields(personalObjectOf(row.kind), row.payload))]);
  }
  const cdrs = await client.query<{ country_code: string; party_id: string; id: string; document: Json }>(
    `select country_code, party_id, id, document from cdrs, lateral (select document as d) x where ${driverOf} for update of cdrs`,
    params,
  );
  for (const row of cdrs.rows) {
    await client.query('update cdrs set document = $4 where country_code = $1 and party_id = $2 and id = $3', [row.country_code, row.party_id, row.id, JSON.stringify(erasePersonalFields('cdr', row.document))]);
  }
  return { objectDeliveryRows: objectDeliveries.rows.length, cdrRows: cdrs.rows.length };
}
