// hubctl's usage text and the error that prints it (exit code 2).

import { deliveredKinds, projectedModules, replayedToEmspModules } from '@hub/modules';
import { RECEIVER_MODULES } from '@hub/registry';

export const USAGE = `usage: npm run hubctl -- [--sandbox] <command> [options] [--json]
  (--sandbox: the running \`npm run sandbox\` hub instead of \`npm start\`'s: docs/how-to/sandbox.md)

  party register --role CPO|EMSP --country CC --party PID --name NAME [--platform ID] [--versions V,...]
                                   register a party and print its initial token
                                   (--platform adds the role to an existing platform;
                                   --versions the OCPI versions it may use: 2.1.1, 2.2.1, 2.3.0; default 2.2.1)
  party list [--role CPO|EMSP]     parties with role, status, OCPI versions (* chosen) and last probe
  party show --country CC --party PID --role ROLE
  party token --country CC --party PID --role ROLE
                                   issue a new initial token (before registration only)
  party suspend|reinstate --country CC --party PID --role ROLE
  partner check CC/PID [--version V]
                                   check the party's platform as deliveries need it (versions,
                                   required receivers, a GET probe of each, TLS); exit 1 on a failure
  endpoint set --country CC --party PID --role ROLE --module ${RECEIVER_MODULES.join('|')} --url URL
  endpoint clear --country CC --party PID --role ROLE --module MODULE
                                   override (or stop overriding) a receiver endpoint URL
  routing enable|disable --emsp CC/PID --cpo CC/PID
  routing list
  deliveries list [--state pending|dead|unroutable|delivered] [--emsp CC/PID] [--cpo CC/PID]
                  [--recipient CC/PID] [--kind ${deliveredKinds.join('|')}] [--reason TEXT] [--older-than 30m] [--limit N]
                                   dead letters, unroutable and pending records
  deliveries redrive (--id N | --emsp CC/PID | --cpo CC/PID | --recipient CC/PID | --reason TEXT | --older-than D | --all) [--kind K]
                                   make dead and unroutable records pending again (after a fix)
  deliveries replay --topic ${replayedToEmspModules.join('|')} --emsp CC/PID (--from-time ISO | --from-offset N)
                    [--rate N] [--dry-run]
                                   deliver a topic again to one eMSP (rate cap in records/s)
  tokens resend --emsp CC/PID [--cpo CC/PID]
                                   queue the eMSP's current tokens for the CPOs actively routed to it
                                   (as the dispatcher does when a rule is enabled); versions a CPO
                                   already holds are not sent again
  erase token --emsp CC/PID --uid UID [--type T] [--settle-seconds S]
                                   erase a driver's token: destroy its data key and the plain copies,
                                   then again after S seconds (default 35: the services' key caches)
                                   (docs/how-to/erase-driver-data.md); needs HUB_SECRET_KEY
  readmodel rebuild --model ${projectedModules.join('|')} [--from snapshot|history]
                                   rebuild a read model from its snapshot topic and the change
                                   topic after it (--from history: the whole change topic) while
                                   the old one serves, then switch over (progress on stderr)
  readmodel snapshot --model ${projectedModules.join('|')}
                                   write every live object of the read model to its snapshot topic
                                   (a deployment whose read model predates it; safe while projectors
                                   run), before the change topic gets a finite retention
  readmodel rejects --model ${projectedModules.join('|')} [--limit N]
                                   the newest events the read model did not apply: not
                                   applicable, or superseded by a newer state (newest wins)
  positions reset --consumer projector|dispatcher [--group G]
                                   after a consumer refused positions of another Kafka cluster or
                                   a recreated topic: rebuild its state from the current topics
                                   and bind its positions to them
  quarantine list [--group G] [--all]
                                   records consumers could not apply (--all: resolved ones too)
  quarantine redrive (--id N | --group G | --all)
                                   apply them again after a fix, through their consumer; waits
                                   for the outcome (applied, superseded, or quarantined again)
  quarantine discard --id N        resolve one without applying it
  status                           the hub on one screen: parties and their health, routing
                                   rules, deliveries pending/dead/unroutable per eMSP, consumer
                                   lag per group, quarantined records, registry outbox pending
`;

/** Flags every command takes. */
const GLOBAL_FLAGS = ['json', 'help'];

/**
 * The flags each command takes ("party register", "status"), read from the usage text, so the text
 * a user reads is the one list: a command line is refused when it names a flag its command's lines
 * there do not (continuation lines belong to the command above them; "a|b" actions share a line).
 */
export function flagsByCommand(usage: string): Map<string, Set<string>> {
  const flags = new Map<string, Set<string>>();
  let current: Set<string>[] = [];
  for (const line of usage.split('\n')) {
    const command = /^ {2}([a-z]+)(?: ([a-z|]+))?(?= |$)/.exec(line);
    if (command?.[1]) {
      current = (command[2] ?? '').split('|').map((action) => {
        const set = new Set(GLOBAL_FLAGS);
        flags.set(action ? `${command[1]} ${action}` : (command[1] as string), set);
        return set;
      });
    }
    for (const m of line.matchAll(/--([a-z][a-z-]*)/g)) for (const set of current) set.add(m[1] as string);
  }
  return flags;
}

export const COMMAND_FLAGS = flagsByCommand(USAGE);

/** A command line hubctl cannot run: the message and the usage are printed, exit code 2. */
export class UsageError extends Error {}
