import type { CommandRecord, CommandStore } from '@hub/core';
import type { InMemoryDeliveryStore } from './in-memory-delivery-store.ts';
import type { InMemoryRegistryView } from './in-memory-registry-store.ts';

// The CommandStore port (@hub/store, postgres-command-store.ts) in memory: a command's life from the
// request to its result or TIMEOUT. The session a STOP_SESSION names comes from the sessions delivered
// to the eMSP, the registered hosts from the registry, as in Postgres. command-store-contract.ts runs
// the same rules on both.

type Json = Record<string, unknown>;
type Held = { -readonly [K in keyof CommandRecord]: CommandRecord[K] } & { reservationId?: string; deadline?: number; result: Json | null; lateResult: Json | null; createdAt: number };

const COMMAND_ID = /^[0-9a-f-]{36}$/i;

// Long because: a test fake of the CommandStore port: short methods over one map of commands.
export function inMemoryCommandStore(registry: InMemoryRegistryView, deliveries: Pick<InMemoryDeliveryStore, 'sessionRow'>, options: { now?: () => number } = {}): CommandStore {
  const now = options.now ?? Date.now;
  const commands = new Map<string, Held>();
  const record = (c: Held): CommandRecord => ({ id: c.id, command: c.command, emsp: c.emsp, cpo: c.cpo, responseUrl: c.responseUrl, state: c.state, correlationId: c.correlationId });
  return {
    async create(c) {
      if (commands.has(c.id)) throw new Error(`command ${c.id} exists`);
      commands.set(c.id, {
        id: c.id,
        command: c.command,
        emsp: c.emsp,
        cpo: c.cpo,
        responseUrl: c.responseUrl,
        state: 'requested',
        correlationId: c.correlationId,
        ...(c.reservationId !== undefined ? { reservationId: c.reservationId } : {}),
        result: null,
        lateResult: null,
        createdAt: now(),
      });
    },
    async answered(id, accepted, timeoutSeconds, graceSeconds) {
      const c = commands.get(id);
      if (!c || c.state !== 'requested') return;
      c.state = accepted ? 'accepted' : 'rejected';
      c.deadline = now() + (timeoutSeconds + graceSeconds) * 1000;
    },
    async result(id, result) {
      const c = COMMAND_ID.test(id) ? commands.get(id) : undefined;
      if (c && (c.state === 'requested' || c.state === 'accepted')) {
        c.state = 'result';
        c.result = result;
        return { outcome: 'forward', command: record(c) };
      }
      if (c && c.state === 'timed_out' && c.lateResult === null) {
        c.lateResult = result;
        return { outcome: 'late', command: record(c) };
      }
      return { outcome: 'unknown' };
    },
    async expire() {
      const expired = [...commands.values()].filter((c) => c.state === 'accepted' && c.deadline !== undefined && c.deadline < now());
      for (const c of expired) c.state = 'timed_out';
      return expired.map(record);
    },
    async reservationCpo(emsp, reservationId) {
      const made = [...commands.values()].filter((c) => c.command === 'RESERVE_NOW' && c.reservationId === reservationId && c.emsp.countryCode === emsp.countryCode && c.emsp.partyId === emsp.partyId);
      const newest = made.sort((a, b) => b.createdAt - a.createdAt)[0];
      return newest ? { countryCode: newest.cpo.countryCode, partyId: newest.cpo.partyId } : undefined;
    },
    async sessionCpo(emsp, sessionId) {
      const row = deliveries.sessionRow(emsp, sessionId);
      return row ? { countryCode: row.cpo.countryCode, partyId: row.cpo.partyId } : undefined;
    },
    async get(id) {
      const c = COMMAND_ID.test(id) ? commands.get(id) : undefined;
      return c && { ...record(c), result: c.result, lateResult: c.lateResult };
    },
    async registeredHosts(platformId) {
      const platform = registry.platform(platformId);
      const urls = [...(platform?.versionsUrl ? [platform.versionsUrl] : []), ...(platform?.endpoints.map((e) => e.url) ?? [])];
      const hosts = new Set<string>();
      for (const url of urls) {
        try {
          hosts.add(new URL(url).host.toLowerCase());
        } catch {
          // an unparseable registered URL allows nothing
        }
      }
      return [...hosts];
    },
  };
}
