import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { local } from './paths.ts';

/** HUB_SECRET_KEY, or a development key kept with the local data (.local/secret.key). */
export function secretKey(): string {
  const given = process.env['HUB_SECRET_KEY'];
  if (given) return given;
  // A development key kept with the local data, so a second start can still read sealed tokens.
  const file = join(local, 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(local, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}
