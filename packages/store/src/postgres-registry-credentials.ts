import { isOcpiVersion, OCPI_VERSION } from '@hub/ocpi';
import { refuseJoin } from '@hub/registry';
import { healthAfterProbe, IMMEDIATE_HEALTH, type Caller, type HealthStatus, type RegistryStore } from '@hub/core';
import { inTransaction, type Pool } from './pg-pool.ts';
import { knownVersions, notifyCredentials, queueOutbox, toParty, type PartyRow } from './registry-rows.ts';

// The registry store's credentials half: tokens and callers, party registration, the credentials
// exchange (credentials.asciidoc), partner access and probes.

export type RegistryCredentials = Pick<
  RegistryStore,
  'findCaller' | 'registerParty' | 'reissueInitialToken' | 'saveCredentials' | 'deleteCredentials' | 'partnerAccess' | 'registeredPlatforms' | 'recordProbe'
>;

export function postgresRegistryCredentials(pool: Pool): RegistryCredentials {
  return {
    findCaller: findCaller(pool),
    registerParty: registerParty(pool),
    reissueInitialToken: reissueInitialToken(pool),
    saveCredentials: saveCredentials(pool),
    deleteCredentials: deleteCredentials(pool),
    partnerAccess: partnerAccess(pool),
    registeredPlatforms: registeredPlatforms(pool),
    recordProbe: recordProbe(pool),
  };
}

function findCaller(pool: Pool): RegistryStore['findCaller'] {
  return async (tokenHash) => {
    const { rows } = await pool.query<PartyRow & { kind: 'INITIAL' | 'HUB'; registered: boolean; token_platform: string; versions: string[]; version: string | null }>(
      `select t.kind, t.platform_id as token_platform, pl.registered_at is not null as registered, pl.versions, pl.version, p.*
         from credentials_tokens t
         join platforms pl on pl.id = t.platform_id
         left join parties p on p.platform_id = t.platform_id
        where t.token_hash = $1 and t.revoked_at is null`,
      [tokenHash],
    );
    const first = rows[0];
    if (!first) return undefined;
    const parties = rows.filter((r) => r.country_code !== null).map(toParty);
    const caller: Caller = {
      platformId: first.token_platform,
      tokenHash,
      tokenKind: first.kind,
      registered: first.registered,
      parties,
      versions: knownVersions(first.versions),
      version: isOcpiVersion(first.version) ? first.version : undefined,
      label: parties.map((p) => `${p.countryCode}/${p.partyId}/${p.role}`).join(','),
    };
    return caller;
  };
}

function registerParty(pool: Pool): RegistryStore['registerParty'] {
  return (input) =>
    inTransaction(pool, async (client) => {
      let platformId = input.platformId;
      if (platformId) {
        const found = await client.query<{ versions: string[]; parties: number }>(
          'select versions, (select count(*)::int from parties where platform_id = $1) as parties from platforms where id = $1 for update',
          [platformId],
        );
        const platform = found.rows[0];
        if (!platform) throw new Error(`no platform ${platformId}`);
        refuseJoin(platformId, knownVersions(platform.versions), platform.parties, input.versions);
      } else {
        const created = await client.query<{ id: string }>('insert into platforms (name, versions) values ($1, $2) returning id', [
          input.name,
          input.versions ?? [OCPI_VERSION],
        ]);
        platformId = created.rows[0]?.id ?? '';
      }
      const { party } = input;
      const inserted = await client.query(
        `insert into parties (country_code, party_id, role, platform_id, name) values ($1, $2, $3, $4, $5)
         on conflict do nothing`,
        [party.countryCode, party.partyId, party.role, platformId, input.name],
      );
      if (inserted.rowCount === 0) throw new Error(`party ${party.countryCode}/${party.partyId}/${party.role} is already registered`);
      if (!input.platformId) {
        await client.query(`insert into credentials_tokens (token_hash, platform_id, kind) values ($1, $2, 'INITIAL')`, [
          input.initialTokenHash,
          platformId,
        ]);
      }
      await queueOutbox(client, input.outbox(platformId));
      await notifyCredentials(client, platformId);
      return { platformId };
    });
}

function reissueInitialToken(pool: Pool): RegistryStore['reissueInitialToken'] {
  return (platformId, initialTokenHash, outbox) =>
    inTransaction(pool, async (client) => {
      await client.query(`update credentials_tokens set revoked_at = now() where platform_id = $1 and revoked_at is null`, [platformId]);
      await client.query(`insert into credentials_tokens (token_hash, platform_id, kind) values ($1, $2, 'INITIAL')`, [initialTokenHash, platformId]);
      await queueOutbox(client, outbox);
      await notifyCredentials(client, platformId);
    });
}

function saveCredentials(pool: Pool): RegistryStore['saveCredentials'] {
  return (change, mode) =>
    inTransaction(pool, async (client) => {
      // Lock the presented token: of two concurrent exchanges with one token, exactly one wins.
      const presented = await client.query(
        `select 1 from credentials_tokens where token_hash = $1 and platform_id = $2 and revoked_at is null for update`,
        [change.presentedTokenHash, change.platformId],
      );
      if (presented.rowCount === 0) return false;
      const platform = await client.query<{ registered: boolean }>(
        'select registered_at is not null as registered from platforms where id = $1 for update',
        [change.platformId],
      );
      if (platform.rows[0]?.registered !== (mode === 'update')) return false;
      // The old hub token (and the initial token) die in the same commit that creates the new one.
      await client.query(`update credentials_tokens set revoked_at = now() where platform_id = $1 and revoked_at is null`, [change.platformId]);
      await client.query(`insert into credentials_tokens (token_hash, platform_id, kind) values ($1, $2, 'HUB')`, [
        change.newHubTokenHash,
        change.platformId,
      ]);
      await client.query(
        `update platforms set versions_url = $2, version = $3, partner_token_sealed = $4, business_details = $5,
                registered_at = coalesce(registered_at, now()), updated_at = now()
          where id = $1`,
        [change.platformId, change.versionsUrl, change.version, change.partnerTokenSealed, JSON.stringify(change.businessDetails)],
      );
      await client.query('delete from partner_endpoints where platform_id = $1', [change.platformId]);
      for (const e of change.endpoints) {
        await client.query(
          `insert into partner_endpoints (platform_id, identifier, role, url) values ($1, $2, $3, $4) on conflict do nothing`,
          [change.platformId, e.identifier, e.role, e.url],
        );
      }
      // A successful exchange just fetched the partner's versions: that is a successful probe.
      await client.query(
        `insert into platform_health (platform_id, status, last_probe_at, last_error, changed_at, consecutive_failures, consecutive_successes)
         values ($1, 'CONNECTED', now(), null, now(), 0, 1)
         on conflict (platform_id) do update set
           changed_at = case when platform_health.status = 'CONNECTED' then platform_health.changed_at else now() end,
           status = 'CONNECTED', last_probe_at = now(), last_error = null,
           consecutive_failures = 0, consecutive_successes = platform_health.consecutive_successes + 1`,
        [change.platformId],
      );
      await client.query('update parties set updated_at = now() where platform_id = $1', [change.platformId]);
      await queueOutbox(client, change.outbox);
      await notifyCredentials(client, change.platformId);
      return true;
    });
}

function deleteCredentials(pool: Pool): RegistryStore['deleteCredentials'] {
  return (platformId, outbox) =>
    inTransaction(pool, async (client) => {
      await client.query(`update credentials_tokens set revoked_at = now() where platform_id = $1 and revoked_at is null`, [platformId]);
      await client.query(
        `update platforms set versions_url = null, version = null, partner_token_sealed = null, registered_at = null, updated_at = now() where id = $1`,
        [platformId],
      );
      await client.query('delete from partner_endpoints where platform_id = $1', [platformId]);
      await client.query('delete from platform_health where platform_id = $1', [platformId]);
      await client.query('update parties set updated_at = now() where platform_id = $1', [platformId]);
      await queueOutbox(client, outbox);
      await notifyCredentials(client, platformId);
    });
}

function partnerAccess(pool: Pool): RegistryStore['partnerAccess'] {
  return async (platformId) => {
    const { rows } = await pool.query<{ versions_url: string; partner_token_sealed: Buffer }>(
      'select versions_url, partner_token_sealed from platforms where id = $1 and registered_at is not null',
      [platformId],
    );
    const r = rows[0];
    return r ? { versionsUrl: r.versions_url, partnerTokenSealed: r.partner_token_sealed } : undefined;
  };
}

function registeredPlatforms(pool: Pool): RegistryStore['registeredPlatforms'] {
  return async () => {
    const { rows } = await pool.query<{ id: string; versions_url: string; version: string | null; partner_token_sealed: Buffer; parties: string[] }>(
      `select pl.id, pl.versions_url, pl.version, pl.partner_token_sealed,
              array(select p.country_code || '/' || p.party_id || '/' || p.role from parties p where p.platform_id = pl.id order by 1) as parties
         from platforms pl where pl.registered_at is not null order by pl.id`,
    );
    return rows.map((r) => ({
      platformId: r.id,
      versionsUrl: r.versions_url,
      version: isOcpiVersion(r.version) ? r.version : OCPI_VERSION,
      partnerTokenSealed: r.partner_token_sealed,
      parties: r.parties,
    }));
  };
}

function recordProbe(pool: Pool): RegistryStore['recordProbe'] {
  return (platformId, result, outboxIfChanged, policy = IMMEDIATE_HEALTH) =>
    inTransaction(pool, async (client) => {
      const before = await client.query<{ status: HealthStatus; consecutive_failures: number; consecutive_successes: number }>(
        'select status, consecutive_failures, consecutive_successes from platform_health where platform_id = $1 for update',
        [platformId],
      );
      const held = before.rows[0];
      const next = healthAfterProbe(held && { status: held.status, failures: held.consecutive_failures, successes: held.consecutive_successes }, result.ok, policy);
      const status = next.status;
      const changed = held?.status !== status;
      await client.query(
        `insert into platform_health (platform_id, status, last_probe_at, last_error, changed_at, consecutive_failures, consecutive_successes)
         values ($1, $2, now(), $3, now(), $5, $6)
         on conflict (platform_id) do update set status = $2, last_probe_at = now(), last_error = $3,
           changed_at = case when $4 then now() else platform_health.changed_at end,
           consecutive_failures = $5, consecutive_successes = $6`,
        [platformId, status, result.error ?? null, changed, next.failures, next.successes],
      );
      if (changed) await queueOutbox(client, outboxIfChanged(status));
      return changed;
    });
}
