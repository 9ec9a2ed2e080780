// The PATCH bodies location-patch sends, in one place: the bench process builds them for autocannon
// and the paced loader (paced.ts, its own process) for the paced phase.
const statuses = ['AVAILABLE', 'CHARGING', 'BLOCKED', 'OUTOFORDER'];

export const patchKinds = {
  'EVSE status': { below: '/3256', fields: (n: number) => ({ status: statuses[n % 4] }) },
  connector: { below: '/3256/1', fields: (n: number) => ({ tariff_ids: [`T${n % 7}`] }) },
} as const;
export type PatchKind = keyof typeof patchKinds;

/**
 * Request n of a kind: spread over the bench's locations (LOC-0 .. LOC-{locations - 1} of NL/BEN), or
 * as an OCPI 2.1.1 CPO (NL/OLD) sends it: its own locations, a connector's single tariff_id.
 */
export function patchRequest(kind: PatchKind, n: number, locations: number, version: '2.1.1' | '2.2.1' = '2.2.1'): { path: string; body: string } {
  const { below, fields } = patchKinds[kind];
  const body = fields(n) as Record<string, unknown>;
  const wire = version === '2.1.1' && Array.isArray(body['tariff_ids']) ? { tariff_id: (body['tariff_ids'] as string[])[0] } : body;
  const party = version === '2.1.1' ? 'NL/OLD' : 'NL/BEN';
  return { path: `/ocpi/${version}/locations/${party}/LOC-${n % locations}${below}`, body: JSON.stringify({ ...wire, last_updated: new Date().toISOString() }) };
}
