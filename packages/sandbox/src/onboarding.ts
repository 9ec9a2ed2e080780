import { partyKey, type PartnerRole, type PartyRef } from '@hub/ocpi';
import { registerParty, reissueInitialToken, setRoutingRule, type OperatorDeps } from '@hub/registry';
import type { OcpiPlatform, PlatformCredentials } from './platform.ts';

// How the sandbox counterparts join the sandbox hub: through the account team's flow (the registry
// operations hubctl party register and routing enable run) and the partner's (POST credentials over
// HTTP), never by writing rows (docs/decisions/0011-sandbox-counterparts.md).

export class SandboxStateLost extends Error {
  constructor(party: PartyRef, role: PartnerRole) {
    super(
      `${partyKey(party)}/${role} is registered on the sandbox hub but the sandbox no longer has its tokens ` +
        '(the state file is gone): start over with `npm run sandbox -- --fresh`, which empties the sandbox hub',
    );
    this.name = 'SandboxStateLost';
  }
}

/**
 * Registers the counterpart's party when needed and runs the credentials exchange as a partner does
 * (credentials.asciidoc, Registration); a counterpart that exchanged credentials before keeps them.
 */
export async function onboardCounterpart(
  op: OperatorDeps,
  platform: OcpiPlatform,
  input: { role: PartnerRole; name: string; saved: PlatformCredentials | undefined; publishAudit: () => Promise<void> },
): Promise<PlatformCredentials> {
  const party = platform.deps.party;
  const existing = await op.store.findParty({ ...party, role: input.role });
  if (existing?.registered && input.saved) {
    platform.credentials = input.saved;
    return input.saved;
  }
  if (existing?.registered) throw new SandboxStateLost(party, input.role);
  const { initialToken } = existing
    ? await reissueInitialToken(op, { ...party, role: input.role })
    : await registerParty(op, { party: { ...party, role: input.role }, name: input.name });
  await input.publishAudit();
  const answer = await platform.callHub('POST', '/ocpi/2.2.1/credentials', {
    token: initialToken,
    body: {
      token: platform.offeredToken,
      url: platform.versionsUrl,
      roles: [{ role: input.role, country_code: party.countryCode, party_id: party.partyId, business_details: { name: input.name } }],
    },
  });
  const data = answer.body?.data as { token?: unknown } | undefined;
  if (answer.body?.status_code !== 1000 || typeof data?.token !== 'string') {
    throw new Error(`credentials exchange of ${partyKey(party)}/${input.role} failed: HTTP ${answer.status}, OCPI ${String(answer.body?.status_code)} ${answer.body?.status_message ?? ''}`);
  }
  platform.credentials = { ownToken: platform.offeredToken, hubToken: data.token };
  return platform.credentials;
}

const same = (a: PartyRef, b: PartyRef) => a.countryCode.toUpperCase() === b.countryCode.toUpperCase() && a.partyId.toUpperCase() === b.partyId.toUpperCase();

/**
 * Sandbox routing: every CPO gets a routing rule with the sandbox eMSP and every eMSP one with the
 * sandbox CPO, once, after its credentials exchange: enabling a rule re-sends the eMSP's tokens and
 * pushes ClientInfo, which reach only a party whose endpoints the hub knows. A pair that has a rule (enabled or disabled by the account team) is left alone,
 * so `hubctl routing disable` sticks. Returns the rules it enabled ("eMSP->CPO").
 */
export async function routeToCounterparts(op: OperatorDeps, counterparts: { cpo: PartyRef; emsp: PartyRef }, publishAudit: () => Promise<void>): Promise<string[]> {
  const [parties, rules] = await Promise.all([op.store.listParties(), op.store.listRoutingRules()]);
  const has = (emsp: PartyRef, cpo: PartyRef) => rules.some((r) => same(r.emsp, emsp) && same(r.cpo, cpo));
  const enabled: string[] = [];
  for (const p of parties) {
    if (!p.registered) continue;
    const pair = p.role === 'CPO' ? { emsp: counterparts.emsp, cpo: p } : { emsp: p, cpo: counterparts.cpo };
    if (has(pair.emsp, pair.cpo) || enabled.includes(`${partyKey(pair.emsp)}->${partyKey(pair.cpo)}`)) continue;
    await setRoutingRule(op, { emsp: pair.emsp, cpo: pair.cpo, enabled: true });
    enabled.push(`${partyKey(pair.emsp)}->${partyKey(pair.cpo)}`);
  }
  if (enabled.length > 0) await publishAudit();
  return enabled;
}
