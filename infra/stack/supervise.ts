import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { root } from './paths.ts';

// What the stack (cli.ts) does with the processes it runs: their output, their health, its own end.

const node = process.execPath;

/** A JSON log line at warn or above, or anything that is not a log line (a stack trace): shown in the terminal. */
export function isProblem(line: string): boolean {
  if (line.trim() === '') return false;
  try {
    const level = (JSON.parse(line) as { level?: unknown }).level;
    return level === 'warn' || level === 'error';
  } catch {
    return true;
  }
}

/** Polls every health URL until each answered 200 once; returns the services still failing at the deadline. */
export async function waitForHealth(checks: ReadonlyArray<{ service: string; url: string }>, timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  const pending = new Map(checks.map((c) => [c.service, c.url]));
  while (pending.size > 0 && Date.now() < deadline) {
    for (const [service, url] of [...pending]) {
      const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status === 200, () => false);
      if (ok) pending.delete(service);
    }
    if (pending.size > 0) await new Promise((r) => setTimeout(r, 250));
  }
  return [...pending.keys()];
}

/**
 * `npm start` is npm, then a shell, then bootstrap.mjs, then this process: a SIGTERM to npm ends npm
 * but reaches none of them, and the stack would run on as orphans. Whoever started us is watched:
 * when it is gone (we were re-parented), everything is stopped as on Ctrl-C.
 */
export function stopWhenOrphaned(stop: () => void): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 500).unref();
}

export function runChild(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit', cwd: root, env });
    const forward = (sig: NodeJS.Signals) => child.kill(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

export async function generateTypes(): Promise<void> {
  const code = await runChild(node, [join(root, 'schemas', 'generate-types.ts')]);
  if (code !== 0) throw new Error('type generation failed');
}
