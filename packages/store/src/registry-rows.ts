import { isOcpiVersion, OCPI_VERSION, type OcpiVersion, type PartnerRole } from '@hub/ocpi';
import { connectionStatus, type OutboxEvent, type Party, type PartyListing } from '@hub/core';
import type { PoolClient } from './pg-pool.ts';

// What the registry store's halves share (postgres-registry-credentials.ts, postgres-registry-parties.ts):
// the outbox and credentials notifications every change writes in its transaction, and party rows.

/** Every change that affects who a token belongs to or what it may do notifies this channel. */
export const CREDENTIALS_CHANNEL = 'hub_credentials_changed';

export async function queueOutbox(client: PoolClient, outbox: readonly OutboxEvent[]): Promise<void> {
  for (const o of outbox) {
    await client.query('insert into registry_outbox (topic, event) values ($1, $2)', [o.topic, JSON.stringify(o.event)]);
  }
  if (outbox.length > 0) await client.query(`select pg_notify('hub_registry_outbox', '')`);
}

export async function notifyCredentials(client: PoolClient, platformId: string): Promise<void> {
  await client.query('select pg_notify($1, $2)', [CREDENTIALS_CHANNEL, platformId]);
}

/** A platform's allowed versions as stored; one this code does not know (a newer writer) is left out. */
export function knownVersions(stored: readonly string[] | null): OcpiVersion[] {
  const known = (stored ?? [OCPI_VERSION]).filter(isOcpiVersion);
  return known.length > 0 ? known : [OCPI_VERSION];
}

export interface PartyRow {
  country_code: string;
  party_id: string;
  role: PartnerRole;
  platform_id: string;
  name: string;
  suspended_at: Date | null;
  updated_at: Date;
}

export const toParty = (r: PartyRow): Party => ({
  countryCode: r.country_code,
  partyId: r.party_id,
  role: r.role,
  platformId: r.platform_id,
  name: r.name,
  suspended: r.suspended_at !== null,
  updatedAt: r.updated_at,
});

export const LISTING_SQL = `
  select p.*, pl.name as platform_name, pl.registered_at is not null as registered, pl.versions, pl.version,
         h.status as health_status, h.last_probe_at, h.last_error,
         coalesce((select jsonb_object_agg(o.module, o.url) from endpoint_overrides o
                   where o.country_code = p.country_code and o.party_id = p.party_id and o.role = p.role), '{}'::jsonb) as overrides
    from parties p
    join platforms pl on pl.id = p.platform_id
    left join platform_health h on h.platform_id = p.platform_id`;

export interface ListingRow extends PartyRow {
  platform_name: string;
  registered: boolean;
  health_status: 'CONNECTED' | 'OFFLINE' | null;
  last_probe_at: Date | null;
  last_error: string | null;
  overrides: Record<string, string>;
  versions: string[];
  version: string | null;
}

export const toListing = (r: ListingRow): PartyListing => {
  const party = toParty(r);
  return {
    ...party,
    platformName: r.platform_name,
    registered: r.registered,
    connectionStatus: connectionStatus({ suspended: party.suspended, registered: r.registered, health: r.health_status ?? 'UNKNOWN' }),
    lastProbeAt: r.last_probe_at ?? undefined,
    lastProbeError: r.last_error ?? undefined,
    receiverOverrides: r.overrides,
    versions: knownVersions(r.versions),
    version: isOcpiVersion(r.version) && r.registered ? r.version : undefined,
  };
};
