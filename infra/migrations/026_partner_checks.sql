-- The last partner check of each platform (docs/how-to/partner-check.md): run by the prober every
-- PARTNER_CHECK_INTERVAL_MS and by hubctl partner check. One row per platform, replaced by each check;
-- report holds every check line as hubctl partner check --json prints it.
create table partner_checks (
  platform_id uuid primary key references platforms (id),
  checked_at timestamptz not null,
  version text not null,
  ok boolean not null,
  failures integer not null,
  -- the first failed check and its reason, null when every check passed
  first_failure text,
  report jsonb not null,
  checked_by text not null
);
