import { ACTIVE_ROUTES } from './postgres-routing-directory.ts';
import { ocpiModules, projectionOf } from '@hub/modules';
import type { ListNarrowing, ReadModel } from '@hub/core';

// What a caller's routed list holds (interface document, What the service does 5: an eMSP sees the objects of the CPOs
// routed to it), as SQL shared by the list pages (read-model-list.ts) and their rank anchors
// (read-model-anchors.ts), so the two always count the same rows in the same order.

/**
 * Which side of a route owns a read model's objects and which side reads them (the module table's
 * owner). Column prefixes of ACTIVE_ROUTES, from a closed set, so they can be inlined into the SQL.
 */
export function sides(model: ReadModel): { owner: 'cpo' | 'emsp'; reader: 'cpo' | 'emsp' } {
  return ocpiModules[model].owner === 'CPO' ? { owner: 'cpo', reader: 'emsp' } : { owner: 'emsp', reader: 'cpo' };
}

/** The list order (creation order, then ids: OCPI pagination needs one stable order). */
export const LIST_ORDER = 'created_at, country_code, party_id, id';

/** A row's key in the list order: where a page starts or ended. */
export type ListKey = readonly [createdAt: string, countryCode: string, partyId: string, id: string];


/**
 * The column a list narrowed to prices excluding taxes filters by, when the narrowing applies to the
 * model (its projection rule names one: only objects with prices). From the module table, so it can be inlined.
 */
const priced = (model: ReadModel, narrow: ListNarrowing | undefined): string | undefined =>
  narrow?.pricesExcludeTaxes === true ? projectionOf(model).pricesExcludeTaxesColumn : undefined;

/** The narrowing as part of a cache key (list cursors, rank anchors): lists narrowed differently differ. */
export const narrowingKey = (model: ReadModel, narrow: ListNarrowing | undefined): string => (priced(model, narrow) !== undefined ? 'prices-exclude-taxes' : '');

/**
 * CTEs `visible_owners` and `matching` (the keys of the caller's list) over parameters $1 platform id,
 * $2 generation, $3 date_from, $4 date_to (either may be null). Visibility is decided per statement from
 * the routing rules. The visible owners are one array the scan filters by (chr(31), the unit separator,
 * cannot occur in a CiString): joined instead, the planner expects one row and sorts every matching key.
 */
export function visibleMatching(model: ReadModel, options: { materialized: boolean; narrow?: ListNarrowing }): string {
  const { table } = projectionOf(model);
  const { owner, reader } = sides(model);
  const column = priced(model, options.narrow);
  return `
      with visible_owners as (
        select a.${owner}_country_code as cc, a.${owner}_party_id as pid from (${ACTIVE_ROUTES}) a where a.${reader}_platform_id = $1
      ),
      matching as ${options.materialized ? 'materialized ' : ''}(
        select t.generation, t.created_at, t.country_code, t.party_id, t.id
          from ${table} t
         where t.generation = $2
           and t.country_code || chr(31) || t.party_id = any(array(select cc || chr(31) || pid from visible_owners))
           and ($3::timestamptz is null or t.last_updated >= $3)
           and ($4::timestamptz is null or t.last_updated < $4)${column !== undefined ? `\n           and t.${column}` : ''}
      )`;
}

/**
 * The number of objects of the visible owners (per-owner counts, migration 016), after visibleMatching.
 * Narrowed, the tariffs left out are subtracted: few (tax-inclusive without vat), found through the
 * partial index tariffs_prices_include_taxes (migration 032).
 */
export function visibleTotal(model: ReadModel, narrow?: ListNarrowing): string {
  const counted = `select coalesce(sum(c.n), 0) from read_model_counts c
            where c.model = '${model}' and c.generation = $2
              and c.country_code || chr(31) || c.party_id = any(array(select cc || chr(31) || pid from visible_owners))`;
  const column = priced(model, narrow);
  if (column === undefined) return counted;
  return `(${counted}) - (select count(*) from ${projectionOf(model).table} x
            where x.generation = $2 and not x.${column}
              and x.country_code || chr(31) || x.party_id = any(array(select cc || chr(31) || pid from visible_owners)))`;
}

/**
 * After visibleMatching: which visible tariffs a narrowed list leaves out, as one short text (empty when
 * not narrowed). A tariff re-sent with or without a vat changes sides without a creation or removal, so
 * the rank anchors (read-model-anchors.ts) compare this too before they trust their ranks.
 */
export function narrowedOut(model: ReadModel, narrow?: ListNarrowing): string {
  const column = priced(model, narrow);
  if (column === undefined) return "''";
  return `(select '|' || md5(coalesce(string_agg(x.country_code || '/' || x.party_id || '/' || x.id, ',' order by x.country_code, x.party_id, x.id), '')) from ${projectionOf(model).table} x
            where x.generation = $2 and not x.${column}
              and x.country_code || chr(31) || x.party_id = any(array(select cc || chr(31) || pid from visible_owners)))`;
}
