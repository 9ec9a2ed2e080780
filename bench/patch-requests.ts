// The PATCH bodies location-patch sends, in one place: the bench process builds them for autocannon
// and the paced loader (paced.ts, its own process) for the paced phase.
const statuses = ['AVAILABLE', 'CHARGING', 'BLOCKED', 'OUTOFORDER'];

export const patchKinds = {
  'EVSE status': { below: '/3256', fields: (n: number) => ({ status: statuses[n % 4] }) },
  connector: { below: '/3256/1', fields: (n: number) => ({ tariff_ids: [`T${n % 7}`] }) },
} as const;
export type PatchKind = keyof typeof patchKinds;

/** Request n of a kind: spread over the bench's locations (LOC-0 .. LOC-{locations - 1} of NL/BEN). */
export function patchRequest(kind: PatchKind, n: number, locations: number): { path: string; body: string } {
  const { below, fields } = patchKinds[kind];
  return { path: `/ocpi/2.2.1/locations/NL/BEN/LOC-${n % locations}${below}`, body: JSON.stringify({ ...fields(n), last_updated: new Date().toISOString() }) };
}
