import { inTransaction, type Pool, type PoolClient } from './pg-pool.ts';
import { LIST_ORDER, narrowedOut, narrowingKey, visibleMatching, visibleTotal, type ListKey } from './read-model-visibility.ts';
import type { ListNarrowing, ReadModel } from '@hub/core';

// Rank anchors: a page at an arbitrary offset of a routed list without date filters starts
// from the nearest anchor instead of skipping `offset` index entries (Postgres has no index that finds
// the n-th row: 0.1-0.5 s at offset 450,000). An anchor set is every `every`-th key of one caller's list
// in creation order, ranked once by one index-only scan and kept in this process. It stays exact
// without rescanning because of how the list changes:
//   - a new object is created after every existing one (creation order is the time of the creating
//     event): anchors keep their ranks, and the objects after the last ranked key are the list's tail;
//   - an object that leaves the list (a DELETE) moves every rank after it: read_model_removals
//     (migration 019) counts those, and a changed count discards the set;
//   - an object created with an older time than the last ranked key (a CPO's late event) shows as a
//     total that exceeds the ranked objects plus the tail, and discards the set too;
//   - a routing change alters the visible owners, which the set records.
// Each deep page checks this in one statement (which also gives X-Total-Count); a tail longer than one
// interval is ranked and appended, anything else ranks the list again. A replica keeps its own sets.

export interface AnchorOptions {
  /** Rows between anchors: a page skips fewer than this many index entries. */
  readonly every: number;
  /** Anchor sets kept (least recently used dropped): one per caller, model and generation. */
  readonly maxSets: number;
}

/** Where a page at an offset starts, and the list's total in the same snapshot as the check. */
export type PageStart =
  | { readonly kind: 'past-end'; readonly total: number }
  | { readonly kind: 'from'; readonly key: ListKey; readonly inclusive: boolean; readonly skip: number; readonly total: number };

interface AnchorSet {
  /** The visible owners when ranked ("CC/PID,..."), and for a narrowed list what it left out (narrowedOut). */
  readonly owners: string;
  /** read_model_removals when ranked. */
  readonly removed: string;
  /** Objects ranked: ranks 0 .. ranked - 1. */
  readonly ranked: number;
  /** keys[j]: the key at rank j * every. */
  readonly keys: readonly ListKey[];
  /** The key at rank ranked - 1. */
  readonly last: ListKey | undefined;
}

interface Check {
  readonly owners: string;
  readonly removed: string;
  readonly total: number;
  /** Objects after the last ranked key. */
  readonly beyond: number;
}

// Long because: a cache of list anchors whose check, refresh and page start share the cached sets and
// the refreshes in flight; each closure is short.
export function rankAnchors(pool: Pool, options: AnchorOptions): (model: ReadModel, platformId: string, generation: number, offset: number, narrow?: ListNarrowing) => Promise<PageStart | undefined> {
  const { every } = options;
  // Insertion-ordered: re-set on use, the least recently used is dropped first when full.
  const sets = new Map<string, AnchorSet>();
  const refreshing = new Map<string, Promise<AnchorSet | undefined>>();

  const check = async (client: Pool | PoolClient, model: ReadModel, platformId: string, generation: number, last: ListKey | undefined, narrow: ListNarrowing | undefined): Promise<Check> => {
    const { rows } = await client.query<{ owners: string; total: string; removed: string; beyond: string }>(
      `${visibleMatching(model, { materialized: false, narrow })}
       select (select coalesce(string_agg(cc || '/' || pid, ',' order by cc, pid), '') from visible_owners) || ${narrowedOut(model, narrow)} as owners,
              (${visibleTotal(model, narrow)}) as total,
              (select coalesce(sum(removed), 0) from read_model_removals where model = '${model}' and generation = $2)::text as removed,
              ${last ? `(select count(*) from matching where (${LIST_ORDER}) > ($5::timestamptz, $6, $7, $8))` : '0'} as beyond`,
      [platformId, generation, null, null, ...(last ?? [])],
    );
    const row = rows[0];
    return { owners: row?.owners ?? '', removed: row?.removed ?? '0', total: Number(row?.total ?? 0), beyond: Number(row?.beyond ?? 0) };
  };
  const holds = (set: AnchorSet, now: Check): boolean => now.owners === set.owners && now.removed === set.removed && now.total === set.ranked + now.beyond;

  /** Ranks the tail of a set that still holds, or the whole list; one snapshot, so counts and rows agree. */
  const refresh = (model: ReadModel, platformId: string, generation: number, prior: AnchorSet | undefined, narrow: ListNarrowing | undefined): Promise<AnchorSet | undefined> =>
    inTransaction(pool, async (client) => {
      await client.query('set transaction isolation level repeatable read, read only');
      const now = await check(client, model, platformId, generation, prior?.last, narrow);
      const base = prior && holds(prior, now) ? prior : undefined;
      const from = base?.last;
      const ranked = base?.ranked ?? 0;
      const keyParams = from ? [...from] : [];
      const n = 5 + keyParams.length;
      const { rows } = await client.query<{ created_at: string; country_code: string; party_id: string; id: string; r: string; last: boolean }>(
        `${visibleMatching(model, { materialized: false, narrow })}
         select created_at::text as created_at, country_code, party_id, id, r, last from (
           select created_at, country_code, party_id, id, row_number() over w - 1 as r, lead(id) over w is null as last
             from matching ${from ? `where (${LIST_ORDER}) > ($5::timestamptz, $6, $7, $8)` : ''}
           window w as (order by ${LIST_ORDER})
         ) ranking
         where (r + $${n}) % $${n + 1} = 0 or last
         order by r`,
        [platformId, generation, null, null, ...keyParams, ranked, every],
      );
      const keys = [...(base?.keys ?? [])];
      let last = base?.last;
      let count = ranked;
      for (const row of rows) {
        const rank = ranked + Number(row.r);
        const key: ListKey = [row.created_at, row.country_code, row.party_id, row.id];
        if (rank % every === 0) keys[rank / every] = key;
        if (row.last) {
          last = key;
          count = rank + 1;
        }
      }
      // The counts (migration 016) and the rows of one snapshot must agree; if they do not, no anchors
      // (pages skip from the start, as before) rather than pages that silently miss objects.
      if (count !== now.total) return undefined;
      return { owners: now.owners, removed: now.removed, ranked: count, keys, last };
    });

  const refreshOnce = (id: string, model: ReadModel, platformId: string, generation: number, prior: AnchorSet | undefined, narrow: ListNarrowing | undefined): Promise<AnchorSet | undefined> => {
    const running = refreshing.get(id);
    if (running) return running;
    const started = refresh(model, platformId, generation, prior, narrow).finally(() => refreshing.delete(id));
    refreshing.set(id, started);
    return started;
  };

  const startOf = (set: AnchorSet, offset: number, total: number): PageStart | undefined => {
    if (offset >= total) return { kind: 'past-end', total };
    if (offset >= set.ranked && set.last) return { kind: 'from', key: set.last, inclusive: false, skip: offset - set.ranked, total };
    const j = Math.floor(offset / every);
    const key = set.keys[j];
    return key ? { kind: 'from', key, inclusive: true, skip: offset - j * every, total } : undefined;
  };

  return async (model, platformId, generation, offset, narrow) => {
    const id = [model, platformId, generation, narrowingKey(model, narrow)].join('\u0000');
    let set = sets.get(id);
    if (set) {
      const now = await check(pool, model, platformId, generation, set.last, narrow);
      if (holds(set, now) && now.beyond < every) {
        sets.delete(id);
        sets.set(id, set);
        return startOf(set, offset, now.total);
      }
    }
    set = await refreshOnce(id, model, platformId, generation, set, narrow);
    sets.delete(id);
    if (!set) return undefined;
    if (sets.size >= options.maxSets) sets.delete(sets.keys().next().value ?? '');
    sets.set(id, set);
    return startOf(set, offset, set.ranked);
  };
}
