import type { Pool } from './pg-pool.ts';
import type { DocumentPage, PageQuery, ReadModel } from '@hub/core';
import { projectionOf } from '@hub/modules';
import { rankAnchors, type AnchorOptions, type PageStart } from './read-model-anchors.ts';
import { LIST_ORDER, narrowingKey, visibleMatching, visibleTotal, type ListKey } from './read-model-visibility.ts';

// A routed list page of locations, tariffs or tokens (OCPI 2.2.1 transport_and_format.asciidoc,
// Pagination), kept flat as the table grows:
//   - X-Total-Count of a list without date filters is a sum over the visible owners' counts (migration
//     016) instead of counting every matching row on every page;
//   - a page that continues where a page served by this process ended (offset = that page's offset +
//     its rows, same caller, filters and generation: what following the Link header asks for) starts
//     after the last key served, an index seek, instead of skipping `offset` index entries. When
//     nothing changed in between it is exactly the page the offset names; when objects were created
//     or deleted before it meanwhile, the partner neither misses an object nor gets one twice;
//   - any other page deep into a list without date filters starts from a rank anchor
//     (read-model-anchors.ts): the exact page the offset names, after skipping fewer than
//     `every` (1,000) entries;
//   - with date_from, the changed objects are found by last_updated (index *_changed, migration 016)
//     and sorted, rather than walking every object in creation order to find the changed ones.

export interface ListOptions extends Partial<Pick<AnchorOptions, 'every' | 'maxSets'>> {
  /** Offsets from which a page without a served predecessor starts from a rank anchor. */
  readonly anchorsFrom?: number;
}

const CURSORS_MAX = 10_000;
const CURSOR_TTL_MS = 10 * 60_000;

export function readModelLists(pool: Pool, options: ListOptions = {}): (model: ReadModel, platformId: string, page: PageQuery) => Promise<DocumentPage> {
  // Skipping 10,000 index entries costs a few milliseconds; ranking a list costs one scan of it.
  const anchorsFrom = options.anchorsFrom ?? 10_000;
  const anchorAt = rankAnchors(pool, { every: options.every ?? 1_000, maxSets: options.maxSets ?? 64 });
  // Insertion-ordered: the oldest entry is dropped first when full.
  const cursors = new Map<string, { key: ListKey; at: number }>();
  const remember = (id: string, key: ListKey): void => {
    cursors.delete(id);
    if (cursors.size >= CURSORS_MAX) cursors.delete(cursors.keys().next().value ?? '');
    cursors.set(id, { key, at: Date.now() });
  };

  return async (model, platformId, page) => {
    const { table } = projectionOf(model);
    const { rows: gen } = await pool.query<{ active: number }>('select active from read_model_generations where model = $1', [model]);
    const generation = gen[0]?.active ?? 1;
    const cursorId = (offset: number) => [model, platformId, generation, narrowingKey(model, page), page.dateFrom?.toISOString() ?? '', page.dateTo?.toISOString() ?? '', page.limit, offset].join('\u0000');
    const found = cursors.get(cursorId(page.offset));
    const after = found && Date.now() - found.at < CURSOR_TTL_MS ? found.key : undefined;
    const dated = page.dateFrom !== undefined || page.dateTo !== undefined;
    const anchored: PageStart | undefined = !after && !dated && page.offset >= anchorsFrom ? await anchorAt(model, platformId, generation, page.offset, page) : undefined;

    const visible = visibleMatching(model, { materialized: page.dateFrom !== undefined, narrow: page });
    const params: unknown[] = [platformId, generation, page.dateFrom ?? null, page.dateTo ?? null];
    const start: { key: ListKey; inclusive: boolean; skip: number } | undefined = after
      ? { key: after, inclusive: false, skip: 0 }
      : anchored?.kind === 'from'
        ? anchored
        : undefined;
    const pageSql = start
      ? `select * from matching where (${LIST_ORDER}) ${start.inclusive ? '>=' : '>'} ($5::timestamptz, $6, $7, $8)
          order by ${LIST_ORDER} offset $9 limit $10`
      : `select * from matching order by ${LIST_ORDER} offset $5 limit $6`;
    const countSql = dated ? `${visible} select count(*) as total from matching` : `${visible} select (${visibleTotal(model, page)}) as total`;
    const [docs, total] = await Promise.all([
      anchored?.kind === 'past-end'
        ? { rows: [] }
        : pool.query<{ document: string; created_at: string; country_code: string; party_id: string; id: string }>(
            `${visible},
             page as (${pageSql})
             select d.document::text as document, p.created_at::text as created_at, p.country_code, p.party_id, p.id
               from page p join ${table} d using (generation, country_code, party_id, id)
              order by p.created_at, p.country_code, p.party_id, p.id`,
            [...params, ...(start ? [...start.key, start.skip, page.limit] : [page.offset, page.limit])],
          ),
      // The anchors' check already counted, in the same snapshot as the start it found.
      anchored ? anchored.total : pool.query<{ total: string }>(countSql, params).then((r) => Number(r.rows[0]?.total ?? 0)),
    ]);
    const last = docs.rows.at(-1);
    if (last && docs.rows.length === page.limit) remember(cursorId(page.offset + docs.rows.length), [last.created_at, last.country_code, last.party_id, last.id]);
    return { documentsJson: docs.rows.map((r) => r.document), total };
  };
}
