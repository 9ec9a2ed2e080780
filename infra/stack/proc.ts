import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import { closeSync, mkdirSync, openSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function say(message: string): void {
  process.stderr.write(`[stack] ${message}\n`);
}

/** Runs a command to completion; rejects with its output when it fails. */
export function run(cmd: string, args: readonly string[], options: SpawnOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}:\n${out.slice(-4000)}`))));
  });
}

export function portOpen(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * A port for a server the caller is about to start. A port the kernel hands out for listen(0) is
 * taken from its ephemeral range, the one outgoing connections draw their local ports from: between
 * closing the probe and the server's bind, a Kafka or Postgres client's connection could take it
 * (EADDRINUSE on a busy test run). So the port is drawn below that range, where nothing takes a port
 * unasked, and reserved by a marker file so that test processes running at once never draw the same
 * one; a marker older than an hour is an earlier run's and is taken over.
 */
export async function freePort(): Promise<number> {
  const ceiling = Math.min(ephemeralRangeStart(), 32_768);
  const floor = 20_000;
  if (ceiling - floor >= 1_000) {
    for (let attempt = 0; attempt < 100; attempt++) {
      const port = floor + randomInt(ceiling - floor);
      if (reservePort(port) && (await canListen(port))) return port;
    }
  }
  return listenZeroPort();
}

const portMarkers = join(tmpdir(), 'ocpi-hub-ports');
const markerLifetimeMs = 3_600_000;

function reservePort(port: number): boolean {
  const marker = join(portMarkers, String(port));
  mkdirSync(portMarkers, { recursive: true });
  try {
    closeSync(openSync(marker, 'wx'));
    return true;
  } catch {
    try {
      if (Date.now() - statSync(marker).mtimeMs < markerLifetimeMs) return false;
      utimesSync(marker, new Date(), new Date());
      return true;
    } catch {
      return false;
    }
  }
}

/** The first port of the kernel's ephemeral range (Linux; 32768 where it cannot be read). */
function ephemeralRangeStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > 0 ? start : 32_768;
  } catch {
    return 32_768;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function listenZeroPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`${what}: process exited with ${child.exitCode}`);
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what}: not ready after ${timeoutMs} ms`);
}

/** Sends SIGTERM, then SIGKILL after graceMs; resolves when the process is gone. */
export function stopProcess(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The processes above `pid` (its parent, that one's parent, ...), from /proc. */
export function ancestorsOf(pid: number): Set<number> {
  const found = new Set<number>();
  for (let at = pid; at > 1; ) {
    let parent: number;
    try {
      // /proc/<pid>/stat: "pid (command) state ppid ...": the command may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${at}/stat`, 'utf8');
      parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
    if (!(parent > 0) || found.has(parent)) break;
    found.add(parent);
    at = parent;
  }
  return found;
}
