import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { infra, local } from './paths.ts';
import { pidAlive, portOpen, run, say, stopProcess, waitFor } from './proc.ts';

// Local single-node Apache Kafka in KRaft mode: the broker jars come from Maven Central through
// infra/kafka/pom.xml (maven-dependency-plugin copy-dependencies) into .local/kafka/libs once; the
// storage is formatted once per data directory; the broker runs as `java -cp 'libs/*' kafka.Kafka`.

const libs = join(local, 'kafka', 'libs');

export async function ensureKafkaJars(): Promise<void> {
  const present = existsSync(libs) && readdirSync(libs).some((f) => /^kafka_2\.13-3\.9\.\d+\.jar$/.test(f));
  if (present) return;
  say('fetching Apache Kafka broker jars from Maven Central (once)');
  mkdirSync(libs, { recursive: true });
  await run('mvn', [
    '-B', '-q', '-f', join(infra, 'kafka', 'pom.xml'),
    'dependency:copy-dependencies', '-DincludeScope=runtime', `-DoutputDirectory=${libs}`,
  ]);
}

export interface BrokerOptions {
  /** Directory holding server.properties, the data and the log for this broker. */
  readonly home: string;
  readonly port: number;
  readonly controllerPort: number;
  readonly nodeId?: number;
  /** "id@host:port,…" for a multi-node cluster; defaults to this node alone. */
  readonly quorumVoters?: string;
  readonly clusterId?: string;
  readonly heapMb?: number;
}

export interface RunningBroker {
  readonly brokers: string;
  readonly pid: number;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

function serverProperties(o: BrokerOptions, dataDir: string): string {
  const nodeId = o.nodeId ?? 1;
  const voters = o.quorumVoters ?? `${nodeId}@127.0.0.1:${o.controllerPort}`;
  const single = voters.split(',').length === 1;
  return [
    'process.roles=broker,controller',
    `node.id=${nodeId}`,
    `controller.quorum.voters=${voters}`,
    `listeners=PLAINTEXT://127.0.0.1:${o.port},CONTROLLER://127.0.0.1:${o.controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${o.port}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    `log.dirs=${dataDir}`,
    'num.partitions=3',
    `offsets.topic.replication.factor=${single ? 1 : 3}`,
    `transaction.state.log.replication.factor=${single ? 1 : 3}`,
    `transaction.state.log.min.isr=${single ? 1 : 2}`,
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=false',
    'log.retention.check.interval.ms=300000',
    'num.network.threads=2',
    'num.io.threads=4',
    '',
  ].join('\n');
}

const LOG4J = [
  'log4j.rootLogger=INFO, file',
  'log4j.appender.file=org.apache.log4j.FileAppender',
  'log4j.appender.file.File=${kafka.logs.dir}/server.log',
  'log4j.appender.file.layout=org.apache.log4j.PatternLayout',
  'log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n',
  'log4j.logger.kafka=INFO',
  'log4j.logger.org.apache.kafka=INFO',
  'log4j.logger.state.change.logger=WARN',
  '',
].join('\n');

/**
 * A broker left running by a launcher that was killed holds the data directory lock (and runs on in
 * its own process group): it is ours, started from this folder, so stop it by its recorded pid.
 */
export async function stopStaleBroker(home: string): Promise<void> {
  const pidFile = join(home, 'broker.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  if (pid > 0 && pidAlive(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(join(home, 'server.properties'))) {
    say(`stopping a broker left over from an earlier run (pid ${pid})`);
    process.kill(pid, 'SIGTERM');
    await waitFor('old broker exit', async () => !pidAlive(pid), 30_000).catch(() => process.kill(pid, 'SIGKILL'));
  }
}

export async function startBroker(o: BrokerOptions): Promise<RunningBroker> {
  await ensureKafkaJars();
  const dataDir = join(o.home, 'data');
  const logsDir = join(o.home, 'logs');
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(logsDir, { recursive: true });
  const pidFile = join(o.home, 'broker.pid');
  await stopStaleBroker(o.home);
  if (await portOpen(o.port)) throw new Error(`port ${o.port} is in use by another program: set KAFKA_BROKERS to use that Kafka, or free the port`);
  const props = join(o.home, 'server.properties');
  writeFileSync(props, serverProperties(o, dataDir));
  writeFileSync(join(o.home, 'log4j.properties'), LOG4J);
  const java = ['-cp', `${libs}/*`];
  if (!existsSync(join(dataDir, 'meta.properties'))) {
    const clusterId = o.clusterId ?? randomBytes(16).toString('base64url');
    // "--cluster-id=<id>": a base64url id may start with "-", which would read as an option.
    await run('java', [...java, 'kafka.tools.StorageTool', 'format', `--cluster-id=${clusterId}`, '-c', props, '--ignore-formatted']);
  }
  const out = openSync(join(logsDir, 'stdout.log'), 'a');
  const heap = o.heapMb ?? 512;
  const child = spawn(
    'java',
    [
      `-Xms${Math.min(256, heap)}m`, `-Xmx${heap}m`, '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-Djava.awt.headless=true',
      `-Dkafka.logs.dir=${logsDir}`, `-Dlog4j.configuration=file:${join(o.home, 'log4j.properties')}`,
      ...java, 'kafka.Kafka', props,
    ],
    // Its own process group: Ctrl-C in the terminal reaches the services, and the stack stops Kafka
    // only after them, so no service loses its broker while shutting down. A broker left behind by a
    // killed launcher is found through broker.pid on the next start.
    { stdio: ['ignore', out, out], detached: true },
  );
  writeFileSync(pidFile, String(child.pid));
  await waitFor(`Kafka broker on 127.0.0.1:${o.port}`, () => portOpen(o.port), 90_000, child);
  return {
    brokers: `127.0.0.1:${o.port}`,
    pid: child.pid ?? 0,
    child,
    async stop() {
      await stopProcess(child, 30_000);
      rmSync(pidFile, { force: true });
    },
  };
}
