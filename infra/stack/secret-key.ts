import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { local } from './paths.ts';

/**
 * HUB_SECRET_KEY, or a development key kept with the local data (.local/secret.key); the sandbox
 * passes its own (SANDBOX_SECRET_KEY, .local/sandbox/secret.key), so it never opens production tokens.
 */
export function secretKey(given: string | undefined = process.env['HUB_SECRET_KEY'], file: string = join(local, 'secret.key')): string {
  if (given) return given;
  // A development key kept with the local data, so a second start can still read sealed tokens.
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}
