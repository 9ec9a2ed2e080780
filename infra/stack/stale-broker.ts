import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ancestorsOf, pidAlive, say, waitFor } from './proc.ts';

// A broker found running in a home when a broker is to start there: a leftover of a killed run is
// stopped; another live run's broker is refused (two `npm test` runs in one checkout share the test
// broker's home). broker.pid names the broker, broker.owner.pid the process that launched it.

/**
 * A broker left running by a launcher that was killed holds the data directory lock (and runs on in
 * its own process group): it is ours, started from this folder, so stop it by its recorded pid.
 */
export async function stopStaleBroker(home: string): Promise<void> {
  const pidFile = join(home, 'broker.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  if (pid > 0 && pidAlive(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(join(home, 'server.properties'))) {
    // A broker whose launcher still runs is another run's (two `npm test` in one checkout), not a
    // leftover: stopping it would fail every test of that run.
    const owner = brokerOwner(home);
    if (owner !== undefined && owner !== process.pid && pidAlive(owner) && !ancestorsOf(process.pid).has(owner)) {
      throw new Error(`the Kafka broker in ${home} (pid ${pid}) belongs to a run that is still going (pid ${owner}): wait for it to end, or stop it`);
    }
    say(`stopping a broker left over from an earlier run (pid ${pid})`);
    process.kill(pid, 'SIGTERM');
    await waitFor('old broker exit', async () => !pidAlive(pid), 30_000).catch(() => process.kill(pid, 'SIGKILL'));
  }
}

/** The pid of the process that launched a home's broker (stopStaleBroker). */
const OWNER_FILE = 'broker.owner.pid';

function brokerOwner(home: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(home, OWNER_FILE), 'utf8'));
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Notes this process as the launcher of the home's broker. */
export function recordOwner(home: string): void {
  writeFileSync(join(home, OWNER_FILE), String(process.pid));
}

export function forgetOwner(home: string): void {
  rmSync(join(home, OWNER_FILE), { force: true });
}
