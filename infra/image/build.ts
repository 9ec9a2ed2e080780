// `npm run image`: one OCI image for every service (docs/how-to/deploy-kubernetes.md;
// docs/decisions/0009-oci-image.md). No base image from a registry: a Debian root file system made
// by debootstrap (cached in .local/image/), Node 24 from the npm package the stack already runs on,
// the workspace's production dependencies installed from the lockfile, the service chosen by the
// command. Built with buildah (vfs storage, storage of our own under .local/image/), exported as an
// OCI archive at .local/image/hub.oci.tar.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MEMORY_ENV, nodeMemoryFlags } from '../stack/node-memory.ts';
import { local, root } from '../stack/paths.ts';
import { run, say } from '../stack/proc.ts';

/** The Debian release and variant of the root file system; changing either makes a new cache file. */
export const DEBIAN = { suite: 'bookworm', variant: 'minbase', mirror: 'http://deb.debian.org/debian' } as const;
/** The image's user: not root, and a number so that runAsNonRoot can check it (deploy/kubernetes/). */
export const HUB_UID = 10001;
/** Uncompressed size the image must stay under (docs/decisions/0009-oci-image.md). */
export const SIZE_LIMIT_MB = 250;
export const IMAGE_NAME = 'localhost/ocpi-hub';
export const imageDir = join(local, 'image');
export const archivePath = join(imageDir, 'hub.oci.tar');
/** buildah's storage of our own: nothing shared with another checkout or the machine's default. */
export const storageArgs = ['--storage-driver', 'vfs', '--root', join(imageDir, 'storage'), '--runroot', join(imageDir, 'run')];

/** The commands the image answers to (its entrypoint's first argument). */
export const COMMANDS = ['ingress', 'projector', 'dispatcher', 'prober', 'hubctl', 'migrate'] as const;
const SCRIPTS: Record<(typeof COMMANDS)[number], string> = {
  ingress: 'services/ingress/src/main.ts',
  projector: 'services/projector/src/main.ts',
  dispatcher: 'services/dispatcher/src/main.ts',
  prober: 'services/prober/src/main.ts',
  hubctl: 'packages/hubctl/src/main.ts',
  migrate: 'infra/image/migrate/main.ts',
};

/** What goes into /opt/hub: the sources the services run (no tests, benchmarks, docs or Kafka jars). */
export function isShipped(path: string): boolean {
  if (/(^|\/)test\//.test(path) || /\.test\.ts$/.test(path)) return false;
  if (/^(bench|test|docs|deploy|\.ci)\//.test(path) || path.startsWith('packages/testing/src/')) return false;
  if (path.startsWith('infra/')) return /^infra\/(package\.json|topics\.json|migrations\/|image\/migrate\/)/.test(path);
  if (/^(packages|services)\/[^/]+\/(package\.json|src\/)/.test(path)) return true;
  if (path.startsWith('schemas/')) return !/^schemas\/(generate-|asyncapi-doc|openapi-doc|doc-components)/.test(path);
  // Every workspace manifest stays (pnpm's frozen lockfile lists them all), tiny without their sources.
  if (/^(test|bench)\/package\.json$/.test(path)) return true;
  return ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml'].includes(path) || path.startsWith('patches/');
}

const sh = (cmd: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) => run(cmd, args, { cwd: root, ...options });
const buildah = (args: readonly string[]) => sh('buildah', [...storageArgs, ...args]);

const installed = (tool: string): boolean => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

/**
 * buildah and debootstrap, installed from Debian when missing and root, as the stack installs its
 * Postgres (a fresh machine runs `npm test` with nothing but the two commands).
 */
async function need(tool: string): Promise<void> {
  if (installed(tool)) return;
  if (process.getuid?.() === 0) {
    say(`no ${tool}: installing Debian's buildah and debootstrap packages`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run('apt-get', ['update', '-q'], { env });
    await run('apt-get', ['install', '-y', '-q', 'buildah', 'debootstrap'], { env });
  }
  if (!installed(tool)) throw new Error(`${tool} is not installed: as root, apt-get install -y buildah debootstrap (docs/how-to/deploy-kubernetes.md)`);
}

/**
 * The Debian root file system, made once and kept as a tar in .local/image/: minbase (essential
 * packages and apt), then without apt's lists and caches, documentation, man pages and locales, and
 * with the hub's user. The list of its packages and versions is kept beside it.
 */
export async function rootfsTar(): Promise<{ tar: string; packages: string; cached: boolean }> {
  // The file name changes with what goes into it (r2: Debian's copyright files kept).
  const tar = join(imageDir, `rootfs-${DEBIAN.suite}-${DEBIAN.variant}-${HUB_UID}-r2.tar`);
  const packages = `${tar}.packages`;
  if (existsSync(tar) && existsSync(packages)) return { tar, packages, cached: true };
  await need('debootstrap');
  const dir = join(imageDir, 'rootfs.tmp');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(imageDir, { recursive: true });
  say(`debootstrap --variant=${DEBIAN.variant} ${DEBIAN.suite} (once; cached in ${tar})`);
  await sh('debootstrap', [`--variant=${DEBIAN.variant}`, DEBIAN.suite, dir, DEBIAN.mirror]);
  const list = await sh('chroot', [dir, 'dpkg-query', '-W', '-f', '${Package}=${Version}\\n']);
  await sh('chroot', [dir, 'groupadd', '--gid', String(HUB_UID), 'hub']);
  await sh('chroot', [dir, 'useradd', '--uid', String(HUB_UID), '--gid', String(HUB_UID), '--no-create-home', '--home-dir', '/opt/hub', '--shell', '/usr/sbin/nologin', 'hub']);
  for (const p of ['var/lib/apt/lists', 'var/cache/apt', 'var/cache/debconf', 'var/log', 'usr/share/man', 'usr/share/info', 'usr/share/locale', 'usr/share/i18n', 'usr/share/zoneinfo', 'usr/share/lintian']) {
    rmSync(join(dir, p), { recursive: true, force: true });
    mkdirSync(join(dir, p), { recursive: true });
  }
  // The licences of what is shipped stay with it: of the documentation, each package's copyright
  // file, and the common licence texts they refer to.
  await sh('find', [join(dir, 'usr/share/doc'), '!', '-type', 'd', '!', '-name', 'copyright', '-delete']);
  await sh('find', [join(dir, 'usr/share/doc'), '-mindepth', '1', '-type', 'd', '-empty', '-delete']);
  for (const p of ['dev', 'proc', 'sys', 'run', 'tmp']) mkdirSync(join(dir, p), { recursive: true });
  chmodSync(join(dir, 'tmp'), 0o1777);
  await sh('tar', ['--numeric-owner', '--xattrs', '-C', dir, '-cf', `${tar}.tmp`, '.']);
  renameSync(`${tar}.tmp`, tar);
  writeFileSync(packages, list);
  rmSync(dir, { recursive: true, force: true });
  return { tar, packages, cached: false };
}

/** The entrypoint: exec (so that SIGTERM reaches Node) the command's script with its memory flags. */
export function entrypointScript(): string {
  const node = ['node', '--disable-warning=TimeoutNegativeWarning'];
  const flags = (c: (typeof COMMANDS)[number]) => (c === 'migrate' ? [] : nodeMemoryFlags(c));
  return [
    '#!/bin/sh',
    '# The image\'s entrypoint, written by infra/image/build.ts: the first argument chooses the command.',
    'set -e',
    'command="${1:-}"',
    '[ $# -gt 0 ] && shift',
    'case "$command" in',
    ...COMMANDS.map((c) => `  ${c}) exec ${[...node, ...flags(c)].join(' ')} /opt/hub/${SCRIPTS[c]} "$@" ;;`),
    `  *) echo "usage: <image> ${COMMANDS.join('|')} [ARGS...]" >&2; exit 64 ;;`,
    'esac',
    '',
  ].join('\n');
}

/** The workspace's shipped files, as in the working tree, in a staging directory with production dependencies. */
async function stageApp(stage: string): Promise<void> {
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  const files = (await sh('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'])).split('\0').filter((f) => f && isShipped(f) && existsSync(join(root, f)));
  for (const f of files) {
    mkdirSync(dirname(join(stage, f)), { recursive: true });
    copyFileSync(join(root, f), join(stage, f));
  }
  const nodeBin = process.execPath;
  const pnpm = process.env['HUB_PNPM_CLI'];
  if (!pnpm) throw new Error('HUB_PNPM_CLI unset: run through npm run image');
  // Production dependencies only, exactly as locked, from the store the checkout already filled.
  await sh(nodeBin, [pnpm, 'install', '--prod', '--frozen-lockfile', '--prefer-offline', '--ignore-scripts', '--config.node-linker=isolated', '--config.package-import-method=copy', '--reporter=append-only'], {
    cwd: stage,
    env: { ...process.env, PATH: `${dirname(nodeBin)}:${process.env['PATH'] ?? ''}`, CI: '1' },
  });
  // The manifests of the test and benchmark workspaces were needed by the lockfile only.
  for (const d of ['test', 'bench', 'packages/testing']) rmSync(join(stage, d), { recursive: true, force: true });
  writeFileSync(join(stage, 'entrypoint.sh'), entrypointScript(), { mode: 0o755 });
}

function duMb(path: string): number {
  const out = spawnSync('du', ['-sxm', path], { encoding: 'utf8' }).stdout;
  return Number(out.split('\t')[0]);
}

export interface BuiltImage {
  readonly archive: string;
  readonly sizeMb: number;
  readonly seconds: number;
  readonly rootfsCached: boolean;
}

// Long because: the image's build, buildah step after step on one container (stage, copy, config,
// commit, push, prune), read top to bottom; the steps share the container and its cleanup on failure.
export async function buildImage(): Promise<BuiltImage> {
  const started = Date.now();
  await need('buildah');
  const rootfs = await rootfsTar();
  const stage = join(imageDir, 'stage');
  say('staging /opt/hub (production dependencies only)');
  await stageApp(stage);
  const revision = (await sh('git', ['rev-parse', 'HEAD'])).trim();
  const dirty = (await sh('git', ['status', '--porcelain', '--untracked-files=no'])).trim() !== '';
  const created = Number((await sh('git', ['log', '-1', '--format=%ct'])).trim());
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: string }).version ?? '0.1.0';
  const ctr = (await buildah(['from', 'scratch'])).trim().split('\n').pop() ?? '';
  try {
    const mnt = (await buildah(['mount', ctr])).trim();
    await sh('tar', ['--numeric-owner', '-C', mnt, '-xf', rootfs.tar]);
    mkdirSync(join(mnt, 'opt', 'hub'), { recursive: true });
    cpSync(stage, join(mnt, 'opt', 'hub'), { recursive: true, verbatimSymlinks: true });
    copyFileSync(process.execPath, join(mnt, 'usr', 'local', 'bin', 'node'));
    chmodSync(join(mnt, 'usr', 'local', 'bin', 'node'), 0o755);
    // Read-only for the service user: it writes nothing but /tmp.
    await sh('chown', ['-R', '0:0', join(mnt, 'opt', 'hub')]);
    // Reproducible: pnpm's install state (the time it pruned, the store's path) goes, and every file
    // gets the commit's time, so two builds of one commit from one root file system are one image.
    for (const f of ['.modules.yaml', '.pnpm-workspace-state-v1.json']) rmSync(join(mnt, 'opt', 'hub', 'node_modules', f), { force: true });
    await sh('find', [mnt, '-xdev', '-exec', 'touch', '--no-dereference', '--date', `@${created}`, '{}', '+']);
    const sizeMb = duMb(mnt);
    await buildah(['umount', ctr]);
    const labels: Record<string, string> = {
      // OCI image-spec annotations.md, Pre-Defined Annotation Keys.
      'org.opencontainers.image.title': 'ocpi-roaming-hub',
      'org.opencontainers.image.description': 'OCPI 2.2.1 roaming hub: ingress, projector, dispatcher, prober, hubctl, migrate (the command chooses)',
      'org.opencontainers.image.version': `${version}+${revision.slice(0, 12)}${dirty ? '.dirty' : ''}`,
      'org.opencontainers.image.revision': revision,
      'org.opencontainers.image.created': new Date(created * 1000).toISOString(),
      'org.opencontainers.image.licenses': 'Apache-2.0',
      'org.opencontainers.image.base.name': `debian:${DEBIAN.suite} (debootstrap --variant=${DEBIAN.variant}, no registry)`,
      'org.opencontainers.image.vendor': 'ocpi-roaming-hub',
    };
    const env = { ...MEMORY_ENV, NODE_ENV: 'production', HUB_ENV: 'production', PATH: '/usr/local/bin:/usr/bin:/bin' };
    await buildah([
      'config',
      '--user', `${HUB_UID}:${HUB_UID}`,
      '--workingdir', '/opt/hub',
      '--entrypoint', JSON.stringify(['/opt/hub/entrypoint.sh']),
      '--cmd', 'ingress',
      // Kubernetes and the image tier stop a service with SIGTERM, then wait for it to drain
      // (docs/how-to/deploy-kubernetes.md, Rolling upgrades).
      '--stop-signal', 'SIGTERM',
      '--port', '8080', '--port', '9464',
      ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
      ...Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`, '--annotation', `${k}=${v}`]),
      ctr,
    ]);
    const tag = `${IMAGE_NAME}:${revision.slice(0, 12)}`;
    await buildah(['commit', '--format', 'oci', '--timestamp', String(created), '--rm', ctr, tag]);
    rmSync(archivePath, { force: true });
    await buildah(['push', tag, `oci-archive:${archivePath}:${IMAGE_NAME}:latest`]);
    // Older builds' images go: vfs keeps a full copy of each. One a container still uses stays.
    const names = (await buildah(['images', '--noheading', '--format', '{{.Name}}:{{.Tag}}'])).split('\n').map((l) => l.trim());
    for (const name of names.filter((n) => n && n !== tag)) await buildah(['rmi', name]).catch(() => '');
    await buildah(['rmi', '--prune']).catch(() => '');
    const seconds = (Date.now() - started) / 1000;
    // The manifest's digest names the image: the same for two builds of one commit (the archive's own
    // tar headers carry the time of the export, so the file's checksum differs).
    const index = JSON.parse(await sh('tar', ['-xOf', archivePath, 'index.json'])) as { manifests: Array<{ digest: string }> };
    const digest = index.manifests[0]?.digest ?? '';
    writeFileSync(join(imageDir, 'build.json'), JSON.stringify({ tag, digest, revision, sizeMb, seconds, rootfsCached: rootfs.cached, archiveMb: Math.round(statSync(archivePath).size / 1e6) }, null, 2));
    say(`image ${tag} (${digest}): ${sizeMb} MB uncompressed (limit ${SIZE_LIMIT_MB}), archive ${archivePath} ${Math.round(statSync(archivePath).size / 1e6)} MB, built in ${seconds.toFixed(0)} s (root file system ${rootfs.cached ? 'cached' : 'made now'})`);
    if (sizeMb > SIZE_LIMIT_MB) throw new Error(`the image is ${sizeMb} MB, over its ${SIZE_LIMIT_MB} MB target`);
    return { archive: archivePath, sizeMb, seconds, rootfsCached: rootfs.cached };
  } catch (e) {
    await buildah(['rm', ctr]).catch(() => '');
    throw e;
  }
}
