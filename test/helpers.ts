import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot, type TestStack } from '@hub/testing';

export { freePort } from '../infra/stack/proc.ts';

/** Runs hubctl exactly as `npm run hubctl` does (its main.ts), against a test stack's environment. */
export function hubctl(env: Record<string, string>, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(repoRoot, 'packages', 'hubctl', 'src', 'main.ts'), ...args], {
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

export interface ReadRecord {
  readonly key: string;
  readonly value: string;
  readonly headers: Record<string, string>;
  readonly partition: number;
  readonly offset: string;
}

/** Reads a topic of the test stack from the beginning until `enough(records)` holds (or timeout). */
export async function readTopic(stack: TestStack, topic: string, enough: (records: ReadRecord[]) => boolean, timeoutMs: number): Promise<ReadRecord[]> {
  const consumer = stack.eventLog.consumer(`reader-${Math.random().toString(36).slice(2)}`);
  const records: ReadRecord[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic: stack.eventLog.physical(topic), fromBeginning: true });
  let done: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (done = resolve));
  await consumer.run({
    eachMessage: async ({ message, partition }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(Array.isArray(v) ? v[0] : v);
      records.push({ key: message.key?.toString() ?? '', value: message.value?.toString() ?? '', headers, partition, offset: message.offset });
      if (enough(records)) done();
    },
  });
  await Promise.race([reached, new Promise((r) => setTimeout(r, timeoutMs))]);
  await consumer.disconnect();
  return records;
}
