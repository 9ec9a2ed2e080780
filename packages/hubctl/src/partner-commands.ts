import { checkRegisteredPartner, formatCheckLines, type PartnerCheckOptions } from '@hub/partners';
import { partnerCheckSubjects, recordPartnerCheck, type Database } from '@hub/store';
import { OperatorInputError, type CommandGroup } from './command-context.ts';
import { UsageError } from './usage.ts';

// hubctl partner check CC/PID: the partner check (docs/how-to/partner-check.md) of the party's
// platform, now, with one line per check; exit status 1 when a check fails. The result is stored as
// the platform's last check, as the prober's periodic one is.

export interface PartnerCheckDeps {
  readonly pool: Database;
  /** Opens a sealed partner token; throws when HUB_SECRET_KEY is not the services' key. */
  readonly openToken: (sealed: Buffer) => string;
  readonly options: Omit<PartnerCheckOptions, 'client'>;
}

export const runPartnerCommand: CommandGroup = async (action, { deps, values, positionals, print }) => {
  if (action !== 'check') return undefined;
  const ref = positionals[2];
  const m = ref === undefined ? null : /^([A-Za-z]{2})\/([A-Za-z0-9]{3})$/.exec(ref);
  if (!m?.[1] || !m[2]) throw new UsageError('partner check needs the party as CC/PID, e.g. NL/ABC');
  if (!deps.partnerCheck) throw new OperatorInputError('partner check is not available here');
  const { pool, openToken, options } = deps.partnerCheck();
  const party = { countryCode: m[1].toUpperCase(), partyId: m[2].toUpperCase() };
  const [subject] = await partnerCheckSubjects(pool, party);
  if (!subject) throw new OperatorInputError(`no registered platform for ${party.countryCode}/${party.partyId} (unknown party, or no credentials exchange yet)`);
  let report;
  try {
    report = await checkRegisteredPartner(subject, openToken, options, values.version);
  } catch (e) {
    throw new OperatorInputError(`cannot check ${party.countryCode}/${party.partyId}: ${(e as Error).message}`);
  }
  await recordPartnerCheck(pool, subject.platformId, report, 'hubctl');
  const parties = subject.parties.map((p) => `${p.countryCode}/${p.partyId}/${p.role}`).join(', ');
  print(`partner check of platform ${subject.platformId} (${parties}), OCPI ${report.version}\n${formatCheckLines(report)}`, { platform_id: subject.platformId, parties: subject.parties, ...report });
  return report.ok ? 0 : 1;
};
