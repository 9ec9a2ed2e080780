import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const local = join(root, '.local');
export const infra = join(root, 'infra');
export const migrationsDir = join(infra, 'migrations');
export const topicsFile = join(infra, 'topics.json');
export const stackEnvFile = join(local, 'stack.env');
/** `npm run sandbox` keeps its own data apart from `npm start`'s (docs/how-to/sandbox.md). */
export const defaultSandboxDir = join(local, 'sandbox');
/** The files of a sandbox kept in `dir` (SANDBOX_DIR): its stack.env, development key and counterparts' tokens. */
export function sandboxFiles(dir: string): { readonly stackEnvFile: string; readonly secretKeyFile: string; readonly stateFile: string } {
  return { stackEnvFile: join(dir, 'stack.env'), secretKeyFile: join(dir, 'secret.key'), stateFile: join(dir, 'counterparts.json') };
}
export const sandboxKafkaHome = join(local, 'kafka', 'sandbox');
