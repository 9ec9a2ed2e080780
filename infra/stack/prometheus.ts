import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, run, say, stopProcess, waitFor } from './proc.ts';

// Prometheus for the observability test: Debian's `prometheus` package gives
// `prometheus` and `promtool`, installed like the stack's Postgres when missing (apt-get as root).
// Only the tests use it; `npm start` never starts a Prometheus.

const BIN_DIRS = ['/usr/bin', '/usr/local/bin', '/usr/sbin'];

function findBin(name: string): string | undefined {
  for (const dir of [...(process.env['PATH'] ?? '').split(':').filter(Boolean), ...BIN_DIRS]) {
    if (existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** Paths of `prometheus` and `promtool`, installing Debian's package when missing and root. */
export async function prometheusBinaries(): Promise<{ prometheus: string; promtool: string }> {
  let prometheus = findBin('prometheus');
  let promtool = findBin('promtool');
  if ((!prometheus || !promtool) && process.getuid?.() === 0) {
    say('no Prometheus binaries: installing Debian\'s prometheus package');
    await run('apt-get', ['update', '-q']);
    await run('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'prometheus'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    prometheus = findBin('prometheus');
    promtool = findBin('promtool');
  }
  if (!prometheus || !promtool) throw new Error('prometheus and promtool are not installed (Debian package "prometheus"); install it or run as root');
  return { prometheus, promtool };
}

export interface RunningPrometheus {
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * A throw-away Prometheus on a free loopback port scraping `targets` (host:port of operator ports,
 * by job name) every second, with `ruleFiles` loaded; storage in a temp directory removed at stop.
 */
export async function startPrometheus(targets: Record<string, string[]>, ruleFiles: readonly string[] = []): Promise<RunningPrometheus> {
  const { prometheus } = await prometheusBinaries();
  const home = mkdtempSync(join(tmpdir(), 'hub-prometheus-'));
  const port = await freePort();
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    ...(ruleFiles.length > 0 ? ['rule_files:', ...ruleFiles.map((f) => `  - ${JSON.stringify(f)}`)] : []),
    'scrape_configs:',
    ...Object.entries(targets).flatMap(([job, hosts]) => [`  - job_name: ${JSON.stringify(job)}`, '    static_configs:', `      - targets: ${JSON.stringify(hosts)}`]),
  ].join('\n');
  writeFileSync(join(home, 'prometheus.yml'), `${config}\n`);
  const child: ChildProcess = spawn(prometheus, [
    `--config.file=${join(home, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(home, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopProcess(child, 10_000);
    rmSync(home, { recursive: true, force: true });
  };
  try {
    await waitFor('prometheus', async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true, 30_000, child);
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n${log}`);
  }
  return { url, pid: child.pid ?? 0, stop };
}
