import type { Pool } from './pool.ts';
import { ACTIVE_ROUTES } from './postgres-routing-directory.ts';
import type { DocumentPage, PageQuery } from './postgres-read-model-store.ts';
import { ocpiModules, projectionOf } from '@hub/modules';
import type { ReadModel } from './read-model-records.ts';

// A routed list page of locations or tariffs (OCPI 2.2.1 transport_and_format.asciidoc, Pagination),
// kept flat as the table grows (issue 16):
//   - X-Total-Count of a list without date filters is a sum over the visible CPOs' counts (migration
//     016) instead of counting every matching row on every page;
//   - a page that continues where a page served by this process ended (offset = that page's offset +
//     its rows, same caller, filters and generation: what following the Link header asks for) starts
//     after the last key served, an index seek, instead of skipping `offset` index entries. When
//     nothing changed in between it is exactly the page the offset names; when objects were created
//     or deleted before it meanwhile, the partner neither misses an object nor gets one twice. Any other
//     offset (or a page another ingress replica served) is skipped to, which grows with the offset:
//     Postgres has no index that finds the n-th row;
//   - with date_from, the changed objects are found by last_updated (index *_changed, migration 016) and sorted, rather
//     than walking every object in creation order to find the changed ones among them.

/**
 * Which side of a route owns a read model's objects and which side reads them (the module table's
 * owner; interface document, Routing: an eMSP sees the objects of the CPOs routed to it). Column
 * prefixes of ACTIVE_ROUTES, from a closed set, so they can be inlined into the SQL.
 */
export function sides(model: ReadModel): { owner: 'cpo' | 'emsp'; reader: 'cpo' | 'emsp' } {
  return ocpiModules[model].owner === 'CPO' ? { owner: 'cpo', reader: 'emsp' } : { owner: 'emsp', reader: 'cpo' };
}

/** Where a served page ended: its last row's key in the list order (creation order). */
type Key = readonly [createdAt: string, countryCode: string, partyId: string, id: string];

const CURSORS_MAX = 10_000;
const CURSOR_TTL_MS = 10 * 60_000;

export function readModelLists(pool: Pool): (model: ReadModel, platformId: string, page: PageQuery) => Promise<DocumentPage> {
  // Insertion-ordered: the oldest entry is dropped first when full.
  const cursors = new Map<string, { key: Key; at: number }>();
  const remember = (id: string, key: Key): void => {
    cursors.delete(id);
    if (cursors.size >= CURSORS_MAX) cursors.delete(cursors.keys().next().value ?? '');
    cursors.set(id, { key, at: Date.now() });
  };

  return async (model, platformId, page) => {
    const { table } = projectionOf(model);
    const { owner, reader } = sides(model);
    const { rows: gen } = await pool.query<{ active: number }>('select active from read_model_generations where model = $1', [model]);
    const generation = gen[0]?.active ?? 1;
    const cursorId = (offset: number) => [model, platformId, generation, page.dateFrom?.toISOString() ?? '', page.dateTo?.toISOString() ?? '', page.limit, offset].join('\u0000');
    const found = cursors.get(cursorId(page.offset));
    const after = found && Date.now() - found.at < CURSOR_TTL_MS ? found.key : undefined;

    // Visibility is decided per request from the routing rules (interface document, Routing). The
    // visible owners (CPOs of locations and tariffs) are one array the scan filters by (chr(31), the unit separator, cannot occur in a
    // CiString): joined instead, the planner expects one row and sorts every matching key.
    const visible = `
      with visible_owners as (
        select a.${owner}_country_code as cc, a.${owner}_party_id as pid from (${ACTIVE_ROUTES}) a where a.${reader}_platform_id = $1
      ),
      matching as ${page.dateFrom ? 'materialized ' : ''}(
        select t.generation, t.created_at, t.country_code, t.party_id, t.id
          from ${table} t
         where t.generation = $2
           and t.country_code || chr(31) || t.party_id = any(array(select cc || chr(31) || pid from visible_owners))
           and ($3::timestamptz is null or t.last_updated >= $3)
           and ($4::timestamptz is null or t.last_updated < $4)
      )`;
    const params: unknown[] = [platformId, generation, page.dateFrom ?? null, page.dateTo ?? null];
    const pageSql = after
      ? `select * from matching where (created_at, country_code, party_id, id) > ($5::timestamptz, $6, $7, $8)
          order by created_at, country_code, party_id, id limit $9`
      : 'select * from matching order by created_at, country_code, party_id, id offset $5 limit $6';
    const countSql =
      page.dateFrom || page.dateTo
        ? `${visible} select count(*) as total from matching`
        : `${visible} select coalesce(sum(c.n), 0) as total from read_model_counts c
            where c.model = '${model}' and c.generation = $2
              and c.country_code || chr(31) || c.party_id = any(array(select cc || chr(31) || pid from visible_owners))`;
    const [docs, count] = await Promise.all([
      pool.query<{ document: string; created_at: string; country_code: string; party_id: string; id: string }>(
        `${visible},
         page as (${pageSql})
         select d.document::text as document, p.created_at::text as created_at, p.country_code, p.party_id, p.id
           from page p join ${table} d using (generation, country_code, party_id, id)
          order by p.created_at, p.country_code, p.party_id, p.id`,
        [...params, ...(after ? [...after, page.limit] : [page.offset, page.limit])],
      ),
      pool.query<{ total: string }>(countSql, params),
    ]);
    const last = docs.rows.at(-1);
    if (last && docs.rows.length === page.limit) remember(cursorId(page.offset + docs.rows.length), [last.created_at, last.country_code, last.party_id, last.id]);
    return { documentsJson: docs.rows.map((r) => r.document), total: Number(count.rows[0]?.total ?? 0) };
  };
}
