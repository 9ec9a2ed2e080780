import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const local = join(root, '.local');
export const infra = join(root, 'infra');
export const migrationsDir = join(infra, 'migrations');
export const topicsFile = join(infra, 'topics.json');
export const stackEnvFile = join(local, 'stack.env');
