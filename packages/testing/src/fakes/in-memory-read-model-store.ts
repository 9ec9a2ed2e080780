import { ocpiModules, parseSubject, projectedModules, projectionOf } from '@hub/modules';
import { creationTime, type ApplyOutcome, type ObjectPath, type ProjectedRecord, type ReadModel, type ReadModelStore } from '@hub/core';
import type { InMemoryRegistryView } from './in-memory-registry-store.ts';

// The read side of the ReadModelStore port (@hub/store, postgres-read-model-store.ts) in memory:
// what the ingress asks (lists and details visible to a platform, location and token owners, existence,
// positions), fed by applyBatch with the projector's own apply functions (@hub/modules). Rebuilds,
// redrives and quarantine stay with Postgres. Each model evolves and answers by its projection rule in
// the module table (@hub/modules, modules.ts), as in Postgres. read-model-contract.ts runs the same rules on both.

type Json = Record<string, unknown>;

export type ReadModelQueries = Pick<ReadModelStore, 'applyBatch' | 'positions' | 'listVisible' | 'findVisible' | 'locationOwners' | 'tokenOwners' | 'tokensByContractId' | 'exists'>;

interface Row {
  readonly countryCode: string;
  readonly partyId: string;
  readonly id: string;
  readonly createdAt: number;
  document: Json;
}

const keyOf = (p: ObjectPath) => `${p.countryCode.toUpperCase()}/${p.partyId.toUpperCase()}/${p.id.toUpperCase()}`;
const time = (v: unknown) => (typeof v === 'string' ? Date.parse(v) : Number.NaN);

// Long because: a test fake of the read-model queries: short methods over the shared rows and
// positions.
export function inMemoryReadModelStore(registry: InMemoryRegistryView): ReadModelQueries {
  const rows = Object.fromEntries(projectedModules.map((m) => [m, new Map<string, Row>()])) as Record<ReadModel, Map<string, Row>>;
  const positions = Object.fromEntries(projectedModules.map((m) => [m, new Map<number, bigint>()])) as Record<ReadModel, Map<number, bigint>>;
  // The owners whose objects a platform sees: those its parties of the other role have an active
  // routing rule with (the module table's owner: CPOs of locations, eMSPs of tokens; read-model-list.ts).
  const visibleOwners = (model: ReadModel, platformId: string) => {
    const cpoOwned = ocpiModules[model].owner === 'CPO';
    return new Set(
      registry
        .activeRoutes()
        .filter((r) => (cpoOwned ? r.emspPlatformId : r.cpoPlatformId) === platformId)
        .map((r) => (cpoOwned ? r.cpo : r.emsp))
        .map((owner) => `${owner.countryCode}/${owner.partyId}`),
    );
  };

  const apply = (model: ReadModel, record: ProjectedRecord): 'applied' | 'rejected' | 'superseded' => {
    const path = parseSubject(record.subject);
    if (!path) return 'rejected';
    const key = keyOf(path);
    const stored = rows[model].get(key);
    const result = projectionOf(model).evolve(stored?.document, record.type, path, record.data);
    if (result.kind === 'rejected' || result.kind === 'superseded') return result.kind;
    if (result.kind === 'deleted') rows[model].delete(key);
    else if (stored) stored.document = result.document;
    else {
      const created = time(creationTime(record.time) || result.document['last_updated']);
      rows[model].set(key, { countryCode: path.countryCode.toUpperCase(), partyId: path.partyId.toUpperCase(), id: path.id.toUpperCase(), createdAt: created, document: result.document });
    }
    return 'applied';
  };

  return {
    async applyBatch(model, partition, records) {
      const outcome = { applied: 0, skipped: 0, rejected: 0, superseded: 0, quarantined: 0 };
      for (const record of records) {
        const next = positions[model].get(partition) ?? 0n;
        if (BigInt(record.offset) < next) {
          outcome.skipped++;
          continue;
        }
        outcome[apply(model, record)]++;
        positions[model].set(partition, BigInt(record.offset) + 1n);
      }
      return outcome satisfies ApplyOutcome;
    },
    async positions(model) {
      return new Map(positions[model]);
    },
    async listVisible(model, platformId, page) {
      const owners = visibleOwners(model, platformId);
      const matching = [...rows[model].values()]
        .filter((r) => owners.has(`${r.countryCode}/${r.partyId}`))
        .filter((r) => {
          const at = time(r.document['last_updated']);
          return (!page.dateFrom || at >= page.dateFrom.getTime()) && (!page.dateTo || at < page.dateTo.getTime());
        })
        .sort((a, b) => a.createdAt - b.createdAt || a.countryCode.localeCompare(b.countryCode) || a.partyId.localeCompare(b.partyId) || a.id.localeCompare(b.id));
      return { documentsJson: matching.slice(page.offset, page.offset + page.limit).map((r) => JSON.stringify(r.document)), total: matching.length };
    },
    async findVisible(model, platformId, path) {
      const row = rows[model].get(keyOf(path));
      if (!row) return undefined;
      const owner = registry.platformParties(platformId).some((p) => p.role === ocpiModules[model].owner && p.countryCode === row.countryCode && p.partyId === row.partyId);
      if (!owner && !visibleOwners(model, platformId).has(`${row.countryCode}/${row.partyId}`)) return undefined;
      return projectionOf(model).find(row.document, path);
    },
    async locationOwners(locationId, emsp) {
      const routed = registry.activeRoutes().filter((r) => r.emsp.countryCode === emsp.countryCode && r.emsp.partyId === emsp.partyId);
      return [...rows.locations.values()]
        .filter((r) => r.id === locationId.toUpperCase() && routed.some((a) => a.cpo.countryCode === r.countryCode && a.cpo.partyId === r.partyId))
        .map((r) => ({ countryCode: r.countryCode, partyId: r.partyId }));
    },
    async tokenOwners(tokenId, cpo) {
      const routed = registry.activeRoutes().filter((r) => r.cpo.countryCode === cpo.countryCode && r.cpo.partyId === cpo.partyId);
      return [...rows.tokens.values()]
        .filter((r) => r.id === tokenId.toUpperCase() && routed.some((a) => a.emsp.countryCode === r.countryCode && a.emsp.partyId === r.partyId))
        .map((r) => ({ countryCode: r.countryCode, partyId: r.partyId }))
        .sort((a, b) => a.countryCode.localeCompare(b.countryCode) || a.partyId.localeCompare(b.partyId));
    },
    async tokensByContractId(contractId, cpo) {
      const routed = registry.activeRoutes().filter((r) => r.cpo.countryCode === cpo.countryCode && r.cpo.partyId === cpo.partyId);
      return [...rows.tokens.values()]
        .filter((r) => String(r.document['contract_id']).toUpperCase() === contractId.toUpperCase() && routed.some((a) => a.emsp.countryCode === r.countryCode && a.emsp.partyId === r.partyId))
        .sort((a, b) => a.countryCode.localeCompare(b.countryCode) || a.partyId.localeCompare(b.partyId) || a.id.localeCompare(b.id))
        .map((r) => r.document);
    },
    async exists(model, path) {
      const row = rows[model].get(keyOf(path));
      if (!row) return false;
      return path.evseUid === undefined || projectionOf(model).find(row.document, path) !== undefined;
    },
  };
}
