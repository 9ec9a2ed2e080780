import { partyKey } from '@hub/ocpi';
import { OperatorInputError, parseVersions, registerParty, reissueInitialToken, setSuspended } from '@hub/registry';
import { lastPartnerCheck } from '@hub/store';
import { need, party, role, type CommandContext } from './command-context.ts';

// hubctl party: register, token, list, show, suspend, reinstate (interface document, Onboarding (a), (c)).

/** "2.1.1*, 2.2.1": the versions the party may use, the one it chose starred. */
function versionsText(versions: readonly string[], chosen: string | null): string {
  return versions.map((v) => (v === chosen ? `${v}*` : v)).join(', ');
}

// Long because: one case per `hubctl party` subcommand, each a few lines of options and output.
export async function runPartyCommand(action: string, ctx: CommandContext): Promise<number | undefined> {
  const { deps, values, op, print, audit } = ctx;
  switch (action) {
    case 'register': {
      const result = await registerParty(op, {
        party: party(values),
        name: need(values, 'name'),
        ...(values.platform ? { platformId: values.platform } : {}),
        ...(values.versions !== undefined ? { versions: parseVersions(values.versions) } : {}),
      });
      const auditPublished = await audit();
      print(
        `registered ${partyKey(party(values))}/${role(values)} on platform ${result.platformId}` +
          (values.versions !== undefined ? ` (OCPI ${parseVersions(values.versions).join(', ')})` : '') +
          '\n' +
          `initial token (give it to the partner through a secure channel; it works once, for credentials and versions):\n${result.initialToken}`,
        { platform_id: result.platformId, initial_token: result.initialToken, audit_published: auditPublished },
      );
      return 0;
    }
    case 'token': {
      const result = await reissueInitialToken(op, party(values));
      const auditPublished = await audit();
      print(`new initial token for ${partyKey(party(values))}/${role(values)} (earlier ones no longer work):\n${result.initialToken}`, {
        platform_id: result.platformId,
        initial_token: result.initialToken,
        audit_published: auditPublished,
      });
      return 0;
    }
    case 'list':
    case 'show': {
      const filterRole = values.role ? role(values) : undefined;
      const list = action === 'show' ? [await deps.store.findParty(party(values))].filter((p) => p !== undefined) : await deps.store.listParties(filterRole ? { role: filterRole } : {});
      if (action === 'show' && list.length === 0) throw new OperatorInputError(`no such party ${partyKey(party(values))}/${role(values)}`);
      const rows = list.map((p) => ({
        country_code: p.countryCode,
        party_id: p.partyId,
        role: p.role,
        name: p.name,
        platform_id: p.platformId,
        status: p.connectionStatus,
        registered: p.registered,
        last_probe_at: p.lastProbeAt?.toISOString() ?? null,
        last_probe_error: p.lastProbeError ?? null,
        receiver_overrides: p.receiverOverrides,
        versions: p.versions,
        version: p.version ?? null,
      }));
      const human = rows.length === 0
        ? 'no parties registered'
        : [
            'PARTY      ROLE  STATUS     OCPI                  LAST PROBE                NAME',
            ...rows.map((r) =>
              `${`${r.country_code}/${r.party_id}`.padEnd(10)} ${r.role.padEnd(5)} ${r.status.padEnd(10)} ${versionsText(r.versions, r.version).padEnd(21)} ${(r.last_probe_at ?? '-').padEnd(25)} ${r.name}` +
              (r.last_probe_error ? `\n           last probe error: ${r.last_probe_error}` : '') +
              Object.entries(r.receiver_overrides).map(([m, u]) => `\n           ${m} receiver: ${u}`).join(''),
            ),
          ].join('\n');
      if (action === 'show' && rows[0]) {
        // The last partner check (docs/how-to/partner-check.md): a CONNECTED partner may still fail it.
        const c = await lastPartnerCheck(deps.status().pool, rows[0].platform_id);
        const last = c ? { checked_at: c.checkedAt.toISOString(), checked_by: c.checkedBy, version: c.version, ok: c.ok, failures: c.failures, first_failure: c.firstFailure ?? null } : null;
        const line = !c ? 'last check: none' : c.ok ? `last check: passed at ${last?.checked_at ?? ''}` : `last check: FAILED at ${last?.checked_at ?? ''} (${c.failures} failed): ${c.firstFailure ?? '?'}`;
        print(`${human}\n           ${line}`, { ...rows[0], last_check: last });
        return 0;
      }
      print(human, action === 'show' ? rows[0] : rows);
      return 0;
    }
    case 'suspend':
    case 'reinstate': {
      await setSuspended(op, { party: party(values), suspended: action === 'suspend' });
      await audit();
      print(`${partyKey(party(values))}/${role(values)} ${action === 'suspend' ? 'suspended' : 'reinstated'}`, { ok: true });
      return 0;
    }
    default:
      return undefined;
  }
}
