import { newEvent, registryEventTypes, topics } from '@hub/events';
import type { OcpiVersion } from '@hub/ocpi';
import type { HealthPolicy, PartnerDirectory, RegistryStore, TokenCipher } from '@hub/core';

// Health probe (interface document, What the service does 9): GET /ocpi/versions on each registered
// partner with the partner's token; the version the partner chose in its credentials exchange listed
// (2.2.1, or 2.1.1 for a 2.1.1 platform) is a good probe, anything else a failed one; the
// partner's status follows them with hysteresis (health.ts).

export interface ProbeDeps {
  readonly store: RegistryStore;
  readonly partners: PartnerDirectory;
  readonly cipher: TokenCipher;
  readonly source: string;
  readonly health?: HealthPolicy;
}

export interface ProbeResult {
  readonly platformId: string;
  readonly ok: boolean;
  readonly error?: string;
  readonly changed: boolean;
}

export async function probePlatform(
  deps: ProbeDeps,
  platform: { readonly platformId: string; readonly versionsUrl: string; readonly version: OcpiVersion; readonly partnerTokenSealed: Buffer },
  correlationId: string,
): Promise<ProbeResult> {
  let ok = false;
  let error: string | undefined;
  try {
    const versions = await deps.partners.fetchVersions(platform.versionsUrl, deps.cipher.open(platform.partnerTokenSealed), { correlationId }, platform.version);
    ok = versions.some((v) => v.version === platform.version);
    if (!ok) error = `no ${platform.version} in versions (${versions.map((v) => v.version).join(', ') || 'empty'})`;
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  const changed = await deps.store.recordProbe(platform.platformId, error === undefined ? { ok } : { ok, error }, (status) => [
    {
      topic: topics.registry,
      event: newEvent({
        type: registryEventTypes.platformHealthChanged,
        source: deps.source,
        subject: platform.platformId,
        key: platform.platformId,
        correlationId,
        data: { platform_id: platform.platformId, status, error: error ?? null },
      }),
    },
  ], deps.health);
  return error === undefined ? { platformId: platform.platformId, ok, changed } : { platformId: platform.platformId, ok, error, changed };
}
