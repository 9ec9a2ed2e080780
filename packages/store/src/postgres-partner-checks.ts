import type { PartnerCheckRecord, PartnerCheckSubject, StoredPartnerCheck } from '@hub/core';
import { pgPool } from './pg-pool.ts';
import type { Database } from './pool.ts';

// The last partner check per platform (migration 026, docs/how-to/partner-check.md). A check older than
// the platform's current registration describes credentials that no longer exist, so reads ignore it.

export async function recordPartnerCheck(db: Database, platformId: string, report: PartnerCheckRecord, checkedBy: string): Promise<void> {
  const pool = pgPool(db);
  const first = report.checks.find((c) => !c.ok);
  await pool.query(
    `insert into partner_checks (platform_id, checked_at, version, ok, failures, first_failure, report, checked_by)
     values ($1, $2, $3, $4, $5, $6, $7, $8)
     on conflict (platform_id) do update set checked_at = excluded.checked_at, version = excluded.version, ok = excluded.ok,
       failures = excluded.failures, first_failure = excluded.first_failure, report = excluded.report, checked_by = excluded.checked_by
     where partner_checks.checked_at <= excluded.checked_at`,
    [platformId, report.checked_at, report.version, report.ok, report.failures, first ? `${first.check}: ${first.reason}` : null, JSON.stringify(report), checkedBy],
  );
}

/** The last check of a platform under its current registration, or undefined. */
export async function lastPartnerCheck(db: Database, platformId: string): Promise<StoredPartnerCheck | undefined> {
  const pool = pgPool(db);
  const { rows } = await pool.query<{ platform_id: string; checked_at: Date; version: string; ok: boolean; failures: number; first_failure: string | null; checked_by: string; report: unknown }>(
    `select c.* from partner_checks c join platforms p on p.id = c.platform_id
      where c.platform_id = $1 and p.registered_at is not null and c.checked_at >= p.registered_at`,
    [platformId],
  );
  const r = rows[0];
  if (!r) return undefined;
  return { platformId: r.platform_id, checkedAt: r.checked_at, version: r.version, ok: r.ok, failures: r.failures, firstFailure: r.first_failure ?? undefined, checkedBy: r.checked_by, report: r.report };
}

/** Registered platforms to check: all, or the one of a party (cc/pid, either role). */
export async function partnerCheckSubjects(db: Database, party?: { countryCode: string; partyId: string }): Promise<PartnerCheckSubject[]> {
  const pool = pgPool(db);
  const { rows } = await pool.query<{ id: string; versions_url: string; partner_token_sealed: Buffer; version: string | null; parties: Array<{ cc: string; pid: string; role: 'CPO' | 'EMSP'; suspended: boolean }>; overrides: Record<string, string> | null }>(
    `select p.id, p.versions_url, p.partner_token_sealed, p.version,
            (select json_agg(json_build_object('cc', x.country_code, 'pid', x.party_id, 'role', x.role, 'suspended', x.suspended_at is not null) order by x.country_code, x.party_id, x.role)
               from parties x where x.platform_id = p.id) as parties,
            (select json_object_agg(o.module, o.url) from endpoint_overrides o join parties x using (country_code, party_id, role) where x.platform_id = p.id) as overrides
       from platforms p
      where p.registered_at is not null and p.versions_url is not null and p.partner_token_sealed is not null
        and ($1::text is null or exists (select 1 from parties x where x.platform_id = p.id and x.country_code = $1 and x.party_id = $2))
      order by p.id`,
    [party?.countryCode ?? null, party?.partyId ?? null],
  );
  return rows.map((r) => ({
    platformId: r.id,
    versionsUrl: r.versions_url,
    partnerTokenSealed: r.partner_token_sealed,
    version: r.version ?? undefined,
    parties: (r.parties ?? []).map((x) => ({ countryCode: x.cc, partyId: x.pid, role: x.role, suspended: x.suspended })),
    overrides: r.overrides ?? {},
  }));
}
