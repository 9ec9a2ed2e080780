import { projectionOf } from '@hub/modules';
import type { Pool } from './pg-pool.ts';
import { prepared } from './prepared.ts';
import type { Json, ReadModelStore } from '@hub/core';
import { ACTIVE_ROUTES } from './postgres-routing-directory.ts';
import { sides } from './read-model-visibility.ts';

// The read-model store's lookups of single objects (postgres-read-model-store.ts), in the active
// generation: by path, as a platform may see them, and the owners a location or token has among the
// parties routed to the asker (ACTIVE_ROUTES).

export function readModelLookups(pool: Pool): Pick<ReadModelStore, 'findObject' | 'findVisible' | 'locationOwners' | 'tokensByContractId' | 'tokenOwners' | 'exists'> {
  return { ...objectLookups(pool), ...routedOwners(pool) };
}

/** One object by its path, as stored or as a platform may see it, and whether it exists at all. */
function objectLookups(pool: Pool): Pick<ReadModelStore, 'findObject' | 'findVisible' | 'exists'> {
  return {
    async findObject(model, path) {
      const { table } = projectionOf(model);
      const { rows } = await pool.query<{ document: Json }>(
        prepared(
          `select t.document from ${table} t
            where t.generation = (select active from read_model_generations where model = $1)
              and t.country_code = $2 and t.party_id = $3 and t.id = $4`,
          [model, path.countryCode, path.partyId, path.id.toUpperCase()],
        ),
      );
      const document = rows[0]?.document;
      return document ? projectionOf(model).find(document, path) : undefined;
    },

    async findVisible(model, platformId, path) {
      const { table } = projectionOf(model);
      const { owner, reader } = sides(model);
      const { rows } = await pool.query<{ document: Json }>(
        prepared(
          `select t.document from ${table} t
            where t.generation = (select active from read_model_generations where model = $2)
              and t.country_code = $3 and t.party_id = $4 and t.id = $5
              and (
                exists (select 1 from parties o where o.platform_id = $1 and o.role = '${owner.toUpperCase()}' and o.country_code = t.country_code and o.party_id = t.party_id)
                or exists (
                  select 1 from (${ACTIVE_ROUTES}) a
                   where a.${reader}_platform_id = $1 and a.${owner}_country_code = t.country_code and a.${owner}_party_id = t.party_id))`,
          [platformId, model, path.countryCode, path.partyId, path.id.toUpperCase()],
        ),
      );
      const document = rows[0]?.document;
      if (!document) return undefined;
      return projectionOf(model).find(document, path);
    },

    async exists(model, path) {
      // A location (or tariff) needs only its key, so its document is not read; an EVSE or connector
      // is looked up in the location document, as a detail GET finds it.
      const needsDocument = path.evseUid !== undefined;
      const { rows } = await pool.query<{ document: Json | null }>(
        prepared(
          `select ${needsDocument ? 'document' : 'null as document'} from ${projectionOf(model).table}
            where generation = (select active from read_model_generations where model = $1) and country_code = $2 and party_id = $3 and id = $4`,
          [model, path.countryCode, path.partyId, path.id.toUpperCase()],
        ),
      );
      const row = rows[0];
      if (!row) return false;
      return !needsDocument || (row.document !== null && projectionOf(model).find(row.document, path) !== undefined);
    },
  };
}

/** The locations and tokens a CPO or eMSP asks about, among the parties routed to it. */
function routedOwners(pool: Pool): Pick<ReadModelStore, 'locationOwners' | 'tokensByContractId' | 'tokenOwners'> {
  return {
    async locationOwners(locationId, emsp) {
      const { rows } = await pool.query<{ country_code: string; party_id: string }>(
        `select l.country_code, l.party_id from locations l
          join (${ACTIVE_ROUTES}) a on a.cpo_country_code = l.country_code and a.cpo_party_id = l.party_id
                                   and a.emsp_country_code = $2 and a.emsp_party_id = $3
          where l.generation = (select active from read_model_generations where model = 'locations') and l.id = $1`,
        [locationId.toUpperCase(), emsp.countryCode, emsp.partyId],
      );
      return rows.map((r) => ({ countryCode: r.country_code, partyId: r.party_id }));
    },

    async tokensByContractId(contractId, cpo) {
      const { rows } = await pool.query<{ document: Json }>(
        `select t.document from (${ACTIVE_ROUTES}) a
          join tokens t on t.country_code = a.emsp_country_code and t.party_id = a.emsp_party_id
                       and t.generation = (select active from read_model_generations where model = 'tokens')
                       and upper(t.document->>'contract_id') = upper($1)
          where a.cpo_country_code = $2 and a.cpo_party_id = $3
          order by t.country_code, t.party_id, t.id`,
        [contractId, cpo.countryCode, cpo.partyId],
      );
      return rows.map((r) => r.document);
    },

    async tokenOwners(tokenId, cpo) {
      // The CPO's routed eMSPs first (routing_rules_cpo), then each one's token by primary key.
      const { rows } = await pool.query<{ country_code: string; party_id: string }>(
        `select t.country_code, t.party_id from (${ACTIVE_ROUTES}) a
          join tokens t on t.country_code = a.emsp_country_code and t.party_id = a.emsp_party_id
                       and t.generation = (select active from read_model_generations where model = 'tokens') and t.id = $1
          where a.cpo_country_code = $2 and a.cpo_party_id = $3
          order by t.country_code, t.party_id`,
        [tokenId.toUpperCase(), cpo.countryCode, cpo.partyId],
      );
      return rows.map((r) => ({ countryCode: r.country_code, partyId: r.party_id }));
    },
  };
}
