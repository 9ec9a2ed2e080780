#!/usr/bin/env node
// Entry point of `npm start`, `npm test` and `npm run hubctl`. It must run on the machine's own node
// (which may be old), so it is plain JavaScript with no dependencies. It provides Node 24 LTS when the
// system's node is too old, provides pnpm, installs the workspace when its manifests changed, and then
// hands over to infra/stack/cli.ts running on the new node. Everything it downloads goes to .local/.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const local = join(root, '.local');
const PNPM_VERSION = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
const NODE_MAJOR = 24;

function log(msg) {
  process.stderr.write(`[bootstrap] ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.status !== 0) {
    log(`failed: ${cmd} ${args.join(' ')} (exit ${r.status ?? r.signal})`);
    process.exit(r.status || 1);
  }
}

// Type stripping (running .ts directly) is on by default from Node 22.18 / 23.6; 22.6+ needs a flag.
function nodeIsNewEnough(version) {
  const [major, minor] = version.split('.').map(Number);
  return major >= 23 || (major === 22 && minor >= 6);
}

function nodeFlags(version) {
  const [major, minor] = version.split('.').map(Number);
  // A timer given a negative delay (a deadline already passed) fires at once; Node >= 23 warns on each
  // one, which is noise in a service's log, not news.
  const flags = ['--disable-warning=TimeoutNegativeWarning'];
  return major === 22 && minor < 18 ? ['--experimental-strip-types', ...flags] : flags;
}

function ensureNode() {
  if (nodeIsNewEnough(process.versions.node)) return { bin: process.execPath, version: process.versions.node };
  const pkg = `node-${process.platform}-${process.arch}`;
  const bin = join(local, 'node', 'node_modules', pkg, 'bin', 'node');
  if (!existsSync(bin)) {
    log(`system node ${process.versions.node} is older than 22: installing ${pkg}@${NODE_MAJOR} from the npm registry`);
    mkdirSync(join(local, 'node'), { recursive: true });
    run('npm', ['install', '--prefix', join(local, 'node'), '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `${pkg}@${NODE_MAJOR}`]);
  }
  const v = spawnSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
  return { bin, version: v };
}

function ensurePnpm() {
  const cli = join(local, 'pnpm', 'node_modules', 'pnpm', 'bin', 'pnpm.cjs');
  const installed = existsSync(cli) && JSON.parse(readFileSync(join(local, 'pnpm', 'node_modules', 'pnpm', 'package.json'), 'utf8')).version === PNPM_VERSION;
  if (!installed) {
    log(`installing pnpm@${PNPM_VERSION}`);
    mkdirSync(join(local, 'pnpm'), { recursive: true });
    run('npm', ['install', '--prefix', join(local, 'pnpm'), '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `pnpm@${PNPM_VERSION}`]);
  }
  return cli;
}

// Reinstall only when a manifest or the lockfile changed since the last successful install.
function manifestsDigest() {
  const h = createHash('sha256');
  const files = ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml'];
  for (const group of ['packages', 'services']) {
    for (const d of readdirSync(join(root, group))) files.push(join(group, d, 'package.json'));
  }
  files.push('schemas/package.json', 'infra/package.json', 'test/package.json', 'bench/package.json');
  // Patched dependencies (pnpm patchedDependencies) are reapplied when a patch changes.
  if (existsSync(join(root, 'patches'))) for (const f of readdirSync(join(root, 'patches')).sort()) files.push(join('patches', f));
  for (const f of files) {
    const p = join(root, f);
    h.update(f).update(existsSync(p) ? readFileSync(p) : '');
  }
  return h.digest('hex');
}

function ensureDependencies(node, pnpm) {
  const stamp = join(local, 'install.stamp');
  const digest = manifestsDigest();
  if (existsSync(join(root, 'node_modules')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) return;
  const frozen = existsSync(join(root, 'pnpm-lock.yaml')) && process.env.HUB_UPDATE_LOCKFILE !== '1';
  log(`installing workspace dependencies${frozen ? ' (frozen lockfile)' : ''}`);
  run(node.bin, [pnpm, 'install', ...(frozen ? ['--frozen-lockfile'] : []), '--prefer-offline', '--reporter=append-only'], {
    env: { ...process.env, PATH: `${dirname(node.bin)}:${process.env.PATH}` },
  });
  mkdirSync(local, { recursive: true });
  writeFileSync(stamp, manifestsDigest());
}

const [command = 'start', ...args] = process.argv.slice(2);
const node = ensureNode();
const pnpm = ensurePnpm();
ensureDependencies(node, pnpm);

// Hand over to the stack CLI on the new node. Children of the CLI find this node first on PATH.
const child = spawn(node.bin, [...nodeFlags(node.version), join(root, 'infra', 'stack', 'cli.ts'), command, ...args], {
  stdio: 'inherit',
  cwd: root,
  env: { ...process.env, PATH: `${dirname(node.bin)}:${process.env.PATH}`, HUB_NODE_BIN: node.bin, HUB_PNPM_CLI: pnpm },
});
// Ctrl-C reaches the whole foreground process group; SIGTERM only reaches us, so pass both on.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
// `npm start` runs npm, a shell, then us: a SIGTERM to npm ends npm and the shell but not us. When
// whoever started us is gone (we were re-parented), the child is stopped as on SIGTERM.
const parent = process.ppid;
const orphanWatch = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(orphanWatch);
  child.kill('SIGTERM');
}, 500);
orphanWatch.unref();
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + 1 : 1)));
