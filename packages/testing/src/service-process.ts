import type { Socket } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './stack.ts';

// A hub service started exactly as `npm start` starts it (node services/<name>/src/main.ts), for
// end-to-end and fault tests; its JSON log lines are kept for assertions.

export interface ServiceProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logs: string[];
  /** Resolves when a log line matches; with `after`, only lines logged after that many lines count. */
  waitForLog(pattern: RegExp, timeoutMs?: number, after?: number): Promise<string>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

// A service's start is its Node process parsing the repository's TypeScript, then its connections:
// about 2 s on a quiet machine, over 20 s on a machine running many test files at once, which is not
// a failure of the service: the default wait is 60 s.
export async function startService(name: string, env: Record<string, string>, ready: RegExp, readyTimeoutMs = 60_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...process.execArgv.filter((a) => !a.startsWith('--test')), join(repoRoot, 'services', name, 'src', 'main.ts')], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  detachFromTestFile(child);
  const logs: string[] = [];
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  const onLine = (line: string) => {
    logs.push(line);
    for (const w of [...waiters]) {
      if (w.pattern.test(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  };
  const feed = lineFeed(onLine);
  child.stdout.on('data', feed);
  child.stderr.on('data', feed);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const service: ServiceProcess = {
    name,
    child,
    logs,
    waitForLog(pattern, timeoutMs = 20_000, after = 0) {
      const seen = logs.slice(after).find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: no log line matching ${pattern} within ${timeoutMs} ms; last lines:\n${logs.slice(-10).join('\n')}`)), timeoutMs);
        waiters.push({ pattern, resolve: (l) => (clearTimeout(timer), resolve(l)) });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited with ${code} before logging ${pattern}:\n${logs.slice(-20).join('\n')}`));
        });
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  try {
    await service.waitForLog(ready, readyTimeoutMs);
  } catch (e) {
    // Not ready in time: the caller never gets this process, so it is ended here, not left running.
    await service.stop('SIGKILL');
    throw e;
  }
  return service;
}

/**
 * A test file's process ends when its tests have, even if a service it started never reached a caller
 * that stops it (a sibling's start failed inside Promise.all): neither the child nor its pipes keep the
 * event loop alive, and whatever still runs when the file's process exits is killed.
 */
function detachFromTestFile(child: ChildProcess): void {
  child.unref();
  // With stdio 'pipe' both are net.Sockets (Node's child_process documentation), typed as Readable.
  (child.stdout as Socket).unref();
  (child.stderr as Socket).unref();
  live.add(child);
  child.once('exit', () => live.delete(child));
}

/** Calls onLine with each complete, non-empty line of the chunks it is fed. */
function lineFeed(onLine: (line: string) => void): (chunk: Buffer) => void {
  let buffered = '';
  return (chunk) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    lines.filter(Boolean).forEach(onLine);
  };
}

/** The services this process started that still run; killed when this process exits. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Parses the JSON log lines of a service (non-JSON lines are skipped). */
export function jsonLogs(service: ServiceProcess): Array<Record<string, unknown>> {
  return service.logs.flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
