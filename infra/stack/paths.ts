import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const local = join(root, '.local');
export const infra = join(root, 'infra');
export const migrationsDir = join(infra, 'migrations');
export const topicsFile = join(infra, 'topics.json');
export const stackEnvFile = join(local, 'stack.env');
/** `npm run sandbox` keeps its own data apart from `npm start`'s (docs/how-to/sandbox.md). */
export const sandboxDir = join(local, 'sandbox');
export const sandboxStackEnvFile = join(sandboxDir, 'stack.env');
export const sandboxSecretKeyFile = join(sandboxDir, 'secret.key');
export const sandboxStateFile = join(sandboxDir, 'counterparts.json');
export const sandboxKafkaHome = join(local, 'kafka', 'sandbox');
