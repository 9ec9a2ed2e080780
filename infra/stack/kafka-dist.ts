// Which Apache Kafka release the local stack runs (KAFKA_VERSION) and its jars: they come from Maven
// Central through infra/kafka/pom.xml (maven-dependency-plugin copy-dependencies) into
// .local/kafka/<version>/libs once.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { infra, local } from './paths.ts';
import { run, say } from './proc.ts';

/**
 * The release the stack runs unless KAFKA_VERSION says otherwise: the newest Kafka 4.x that Maven
 * Central serves here (docs/decisions/0010-kafka-4-by-default.md).
 */
export const DEFAULT_KAFKA_VERSION = '4.4.0';
/** The previous line, what a managed 3.x cluster runs: what the compat test tier runs. */
export const KAFKA_3_VERSION = '3.9.1';

/**
 * KAFKA_VERSION: which Apache Kafka the local stack and the tests start: 4.x (the default) or 3.9.x
 * (the last 3.x line, what a managed 3.x cluster runs); KRaft in both.
 */
export function kafkaVersion(setting: string | undefined = process.env['KAFKA_VERSION']): string {
  const v = setting?.trim() || DEFAULT_KAFKA_VERSION;
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(v);
  if (!m || !(m[1] === '4' || (m[1] === '3' && m[2] === '9'))) throw new Error(`KAFKA_VERSION must be a Kafka 4.x or 3.9.x release such as ${DEFAULT_KAFKA_VERSION} or ${KAFKA_3_VERSION}, got "${v}"`);
  return v;
}

export const kafkaMajor = (version: string) => Number(version.split('.')[0]);
const libsOf = (version: string) => join(local, 'kafka', version, 'libs');

/** Fetches the jars of this Kafka version once (into a temporary folder, then renamed: an interrupted fetch leaves no half cache). */
export async function ensureKafkaJars(version: string = kafkaVersion()): Promise<string> {
  const libs = libsOf(version);
  if (existsSync(join(libs, `kafka_2.13-${version}.jar`))) return libs;
  say(`fetching Apache Kafka ${version} broker jars from Maven Central (once)`);
  const partial = `${libs}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  await run('mvn', [
    '-B', '-q', '-f', join(infra, 'kafka', 'pom.xml'),
    `-Dkafka.version=${version}`, `-Dkafka.logging=${kafkaMajor(version) >= 4 ? 'log4j2' : 'reload4j'}`,
    'dependency:copy-dependencies', '-DincludeScope=runtime', `-DoutputDirectory=${partial}`,
  ]);
  // Another process may have finished the same fetch meanwhile: its copy is as good as ours.
  if (existsSync(join(libs, `kafka_2.13-${version}.jar`))) rmSync(partial, { recursive: true, force: true });
  else {
    rmSync(libs, { recursive: true, force: true });
    renameSync(partial, libs);
  }
  return libs;
}

/** The Kafka release that last ran on a broker's data (written at each start). */
const VERSION_FILE = 'kafka.version';

function newerThan(a: string, b: string): boolean {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  return false;
}

/**
 * Kafka upgrades its data in place but has no downgrade: a 3.9 broker on data a 4.x broker wrote
 * fails somewhere in its metadata log. Refuse at once, naming the folder, instead.
 */
export function refuseDowngrade(home: string, version: string): void {
  const file = join(home, VERSION_FILE);
  const last = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (last && newerThan(last, version)) {
    throw new Error(`the Kafka data in ${home} was last run by Kafka ${last}; Kafka ${version} cannot run it (Kafka has no downgrade): remove that folder or unset KAFKA_VERSION`);
  }
}

export function recordVersion(home: string, version: string): void {
  writeFileSync(join(home, VERSION_FILE), version);
}
