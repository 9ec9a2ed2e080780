// CPU priority of the hub's processes where one host runs them all: `npm start` (run.ts) and the
// benchmarks (bench/load.ts startNode), so benchmarks measure what `npm start` runs
// (docs/decisions/0018-partners-before-the-projector.md).
//
// Why: a partner waits for the ingress's answer (and the ingress for the broker's acknowledgement),
// while the projector works off the log behind them and only has to keep up on average; at the same
// priority its batches take a core in bursts and the PATCHes due meanwhile wait (the decision record
// has the figures). Applied by nice(1), which execs the command, so every thread of the process (V8's
// and libuv's, made at start-up) has it: os.setPriority on a running process reaches only its main
// thread. Kubernetes gives each service its own CPU request instead (deploy/kubernetes).
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { HubProcess } from './node-memory.ts';

/** The settings a niceness comes from; only the projector's is a setting (PROJECTOR_NICENESS). */
const NICENESS_VARIABLE: Partial<Record<HubProcess, string>> = { projector: 'PROJECTOR_NICENESS' };

/** The projector's niceness unless PROJECTOR_NICENESS says otherwise; the others keep the launcher's. */
export const DEFAULT_PROJECTOR_NICENESS = 10;

/**
 * A niceness setting's value, or `fallback` when it is unset: 0 to 19 (an unprivileged process may lower
 * its priority, not raise it); anything else is refused with the setting's name, not guessed at.
 */
export function parseNiceness(variable: string, text: string | undefined, fallback: number): number {
  const value = text?.trim() || String(fallback);
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 19) throw new Error(`${variable} must be an integer from 0 to 19, got "${value}"`);
  return n;
}

/** The niceness of a hub process from its setting (env is the launcher's environment). */
export function nicenessOf(process: HubProcess, env: Readonly<Record<string, string | undefined>>): number {
  const variable = NICENESS_VARIABLE[process];
  return variable ? parseNiceness(variable, env[variable], DEFAULT_PROJECTOR_NICENESS) : 0;
}

/**
 * Whether nice(1) is on `path` (coreutils and BSD userlands have it; a minimal container may not):
 * without it the launcher runs every service at its own priority instead of failing to spawn.
 */
export function niceOnPath(path: string | undefined): boolean {
  return (path ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir || '.', 'nice'), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The niceness a hub process is launched at: its setting's, or 0 where nice(1) is not on env's PATH. */
export function launchNiceness(process: HubProcess, env: Readonly<Record<string, string | undefined>>): number {
  const niceness = nicenessOf(process, env);
  return niceness > 0 && !niceOnPath(env['PATH']) ? 0 : niceness;
}

/** The command that runs `command args` at `niceness`: nice(1) execs it, so its pid is the service's. */
export function atNiceness(niceness: number, command: string, args: readonly string[]): { command: string; args: string[] } {
  return niceness === 0 ? { command, args: [...args] } : { command: 'nice', args: ['-n', String(niceness), command, ...args] };
}
