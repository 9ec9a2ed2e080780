import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEventLog } from '@hub/event-log';
import { ensureKafkaJars, kafkaMajor, kafkaVersion, recordVersion, refuseDowngrade } from './kafka-dist.ts';
import { brokerLogging } from './kafka-log4j.ts';
import { local } from './paths.ts';
import { portOpen, run, stopProcess, waitFor } from './proc.ts';
import { forgetOwner, recordOwner, stopStaleBroker } from './stale-broker.ts';

// Local Apache Kafka in KRaft mode (one node, or a quorum of N with startCluster): the jars of the
// chosen release (kafka-dist.ts), the storage formatted once per data directory; the broker runs as
// `java -cp 'libs/*' kafka.Kafka`.

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
  /** A SASL_SSL listener besides the PLAINTEXT one (what a managed cluster offers its clients). */
  readonly secured?: SecuredListener;
  /** The Kafka release to run; KAFKA_VERSION or DEFAULT_KAFKA_VERSION when absent. */
  readonly version?: string;
  /** Broker settings a test sets besides these defaults (server.properties lines, name -> value). */
  readonly settings?: Readonly<Record<string, string>>;
}

export interface SecuredListener {
  readonly port: number;
  /** PKCS12 keystore holding the broker's certificate and key. */
  readonly keystoreFile: string;
  readonly keystorePassword: string;
  /** SCRAM credentials created at storage format time with the broker's own StorageTool. */
  readonly scramUsers: ReadonlyArray<{ readonly mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512'; readonly username: string; readonly password: string }>;
  /** PLAIN users (username -> password), kept in the listener's JAAS configuration. */
  readonly plainUsers?: Readonly<Record<string, string>>;
}

export interface RunningBroker {
  readonly brokers: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** The Kafka release this process runs. */
  readonly version: string;
  stop(): Promise<void>;
}

/** server.properties lines of the SASL_SSL listener: TLS from the keystore, SCRAM and PLAIN logins. */
function securedProperties(l: SecuredListener): string[] {
  const quote = (v: string) => JSON.stringify(v);
  const plain = Object.entries(l.plainUsers ?? {}).map(([u, pw]) => ` user_${u}=${quote(pw)}`).join('');
  return [
    'sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN',
    'listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
    'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
    `listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required${plain};`,
    'ssl.keystore.type=PKCS12',
    `ssl.keystore.location=${l.keystoreFile}`,
    `ssl.keystore.password=${l.keystorePassword}`,
    `ssl.key.password=${l.keystorePassword}`,
    'ssl.client.auth=none',
  ];
}

function serverProperties(o: BrokerOptions, dataDir: string): string {
  const nodeId = o.nodeId ?? 1;
  const voters = o.quorumVoters ?? `${nodeId}@127.0.0.1:${o.controllerPort}`;
  // Internal topics replicated like the hub's (3, in-sync 2), as far as the quorum has nodes.
  const voterCount = voters.split(',').length;
  const secured = o.secured ? [`SASL_SSL://127.0.0.1:${o.secured.port}`] : [];
  return [
    'process.roles=broker,controller',
    `node.id=${nodeId}`,
    `controller.quorum.voters=${voters}`,
    `listeners=${[`PLAINTEXT://127.0.0.1:${o.port}`, `CONTROLLER://127.0.0.1:${o.controllerPort}`, ...secured].join(',')}`,
    `advertised.listeners=${[`PLAINTEXT://127.0.0.1:${o.port}`, ...secured].join(',')}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    `listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT${o.secured ? ',SASL_SSL:SASL_SSL' : ''}`,
    ...(o.secured ? securedProperties(o.secured) : []),
    `log.dirs=${dataDir}`,
    'num.partitions=3',
    `offsets.topic.replication.factor=${Math.min(3, voterCount)}`,
    `transaction.state.log.replication.factor=${Math.min(3, voterCount)}`,
    `transaction.state.log.min.isr=${Math.min(2, voterCount)}`,
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=false',
    'log.retention.check.interval.ms=300000',
    'num.network.threads=2',
    'num.io.threads=4',
    ...Object.entries(o.settings ?? {}).map(([name, value]) => `${name}=${value}`),
    '',
  ].join('\n');
}

/** A broker process spawned but not yet known to listen (a cluster node waits for its quorum). */
interface LaunchedBroker extends RunningBroker {
  ready(): Promise<void>;
}

async function launchBroker(o: BrokerOptions): Promise<LaunchedBroker> {
  const version = kafkaVersion(o.version);
  const libs = await ensureKafkaJars(version);
  const dataDir = join(o.home, 'data');
  const logsDir = join(o.home, 'logs');
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(logsDir, { recursive: true });
  const pidFile = join(o.home, 'broker.pid');
  await stopStaleBroker(o.home);
  if (await portOpen(o.port)) throw new Error(`port ${o.port} is in use by another program: set KAFKA_BROKERS to use that Kafka, or free the port`);
  refuseDowngrade(o.home, version);
  const props = join(o.home, 'server.properties');
  writeFileSync(props, serverProperties(o, dataDir), { mode: 0o600 });
  const logging = brokerLogging(kafkaMajor(version), process.env['BENCH_KAFKA_REQUEST_LOG']);
  writeFileSync(join(o.home, logging.file), logging.text);
  const java = ['-cp', `${libs}/*`];
  if (!existsSync(join(dataDir, 'meta.properties'))) {
    const clusterId = o.clusterId ?? randomBytes(16).toString('base64url');
    // SCRAM credentials live in the cluster metadata: in KRaft they are written at format time.
    const scram = (o.secured?.scramUsers ?? []).flatMap((u) => ['--add-scram', `${u.mechanism}=[name=${u.username},password=${u.password}]`]);
    // "--cluster-id=<id>": a base64url id may start with "-", which would read as an option.
    await run('java', [...java, 'kafka.tools.StorageTool', 'format', `--cluster-id=${clusterId}`, '-c', props, '--ignore-formatted', ...scram]);
  }
  recordVersion(o.home, version);
  const out = openSync(join(logsDir, 'stdout.log'), 'a');
  const heap = o.heapMb ?? 512;
  const child = spawn(
    'java',
    [
      `-Xms${Math.min(256, heap)}m`, `-Xmx${heap}m`, '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-Djava.awt.headless=true',
      // BENCH_KAFKA_GC_LOG=FILE: every collection of the broker's JVM, with its wall-clock time and pause (benchmarks).
      ...(process.env['BENCH_KAFKA_GC_LOG'] ? [`-Xlog:gc:file=${process.env['BENCH_KAFKA_GC_LOG']}:time`] : []),
      `-Dkafka.logs.dir=${logsDir}`, logging.jvmFlag(join(o.home, logging.file)),
      ...java, 'kafka.Kafka', props,
    ],
    // Its own process group: Ctrl-C in the terminal reaches the services, and the stack stops Kafka
    // only after them, so no service loses its broker while shutting down. A broker left behind by a
    // killed launcher is found through broker.pid on the next start.
    { stdio: ['ignore', out, out], detached: true },
  );
  writeFileSync(pidFile, String(child.pid));
  recordOwner(o.home);
  return {
    brokers: `127.0.0.1:${o.port}`,
    pid: child.pid ?? 0,
    child,
    version,
    ready: () => waitFor(`Kafka broker on 127.0.0.1:${o.port}`, () => portOpen(o.port), 90_000, child),
    async stop() {
      await stopProcess(child, 30_000);
      rmSync(pidFile, { force: true });
      forgetOwner(o.home);
    },
  };
}

export async function startBroker(o: BrokerOptions): Promise<RunningBroker> {
  const broker = await launchBroker(o);
  await broker.ready();
  return broker;
}

export interface ClusterOptions {
  readonly nodes: number;
  /** Node N lives in <home>/node-N. */
  readonly home: string;
  /** Client port of node N is ports[N-1].port; its controller port ports[N-1].controllerPort. */
  readonly ports: ReadonlyArray<{ readonly port: number; readonly controllerPort: number }>;
  readonly heapMb?: number;
  /** The Kafka release every node runs; KAFKA_VERSION or DEFAULT_KAFKA_VERSION when absent. */
  readonly version?: string;
  /** Broker settings of every node besides the defaults (BrokerOptions.settings). */
  readonly settings?: Readonly<Record<string, string>>;
}

export interface RunningCluster {
  /** "host:port,…" of every node: the bootstrap list for clients. */
  readonly brokers: string;
  /** Node N is nodes[N-1]: its pid, and a stop of that node alone (a broker lost). */
  readonly nodes: readonly RunningBroker[];
  /** Starts node N again on its data and ports (after a stop or a kill); nodes[N-1] becomes the new process. */
  restartNode(nodeId: number): Promise<RunningBroker>;
  stop(): Promise<void>;
}

/**
 * A KRaft quorum on loopback: every node is broker and controller, the voters are all nodes, so a
 * three-node cluster gives topics their real replication factor and min.insync.replicas and survives
 * the loss of one node. All nodes are launched before any is awaited: a node's broker listener opens
 * only once a majority of the voters runs.
 */
export async function startCluster(o: ClusterOptions): Promise<RunningCluster> {
  if (o.nodes < 1 || o.ports.length < o.nodes) throw new Error(`a cluster of ${o.nodes} nodes needs ${o.nodes} port pairs`);
  const ports = o.ports.slice(0, o.nodes);
  const voters = ports.map((p, i) => `${i + 1}@127.0.0.1:${p.controllerPort}`).join(',');
  const clusterId = clusterIdOf(o.home, o.nodes) ?? randomBytes(16).toString('base64url');
  const nodes: LaunchedBroker[] = [];
  const stopAll = () => Promise.all(nodes.map((n) => n.stop())).then(() => undefined);
  const nodeOptions = (i: number): BrokerOptions => ({ home: join(o.home, `node-${i + 1}`), ...ports[i]!, nodeId: i + 1, quorumVoters: voters, clusterId, ...(o.heapMb ? { heapMb: o.heapMb } : {}), ...(o.version ? { version: o.version } : {}), ...(o.settings ? { settings: o.settings } : {}) });
  try {
    for (const i of ports.keys()) nodes.push(await launchBroker(nodeOptions(i)));
    await Promise.all(nodes.map((n) => n.ready()));
    await waitForRegistration(nodes.map((n) => n.brokers), o.nodes);
  } catch (e) {
    await stopAll();
    throw e;
  }
  const restartNode = async (nodeId: number) => {
    await nodes[nodeId - 1]?.stop();
    const node = await launchBroker(nodeOptions(nodeId - 1));
    nodes[nodeId - 1] = node;
    await node.ready();
    return node;
  };
  return { brokers: nodes.map((n) => n.brokers).join(','), nodes, restartNode, stop: stopAll };
}

/**
 * A node listens before the controller has its registration: until every node is in the cluster's
 * metadata, topics would be created with fewer replicas than the cluster will have.
 */
async function waitForRegistration(brokers: string[], count: number): Promise<void> {
  const quiet = { error() {}, warn() {}, info() {}, debug() {} };
  // Each node is asked on its own (a client seeded with that node only): one node's metadata can list
  // every broker while another's does not yet, and topics are created on whichever a client asks.
  const logs = await Promise.all(brokers.map((b) => createEventLog({ brokers: [b], clientId: 'stack-cluster', logger: quiet })));
  const admins = logs.map((l) => l.topicAdmin());
  try {
    await waitFor(`${count} Kafka brokers registered`, async () => {
      try {
        for (const admin of admins) {
          if ((await admin.describeCluster()).brokers.length < count) return false;
        }
        return true;
      } catch {
        return false;
      }
    }, 90_000);
  } finally {
    await Promise.all(logs.map((l) => l.close()));
  }
}

/** The cluster id an earlier start formatted the nodes with: a node added later must share it. */
function clusterIdOf(home: string, nodes: number): string | undefined {
  for (let i = 1; i <= nodes; i++) {
    const meta = join(home, `node-${i}`, 'data', 'meta.properties');
    const id = existsSync(meta) ? /cluster\.id=(.+)/.exec(readFileSync(meta, 'utf8'))?.[1]?.trim() : undefined;
    if (id) return id;
  }
  return undefined;
}

/** KAFKA_NODES: how many KRaft nodes `npm start` runs on loopback (1, or a quorum of 3 or more). */
function kafkaNodes(setting: string | undefined): number {
  const v = setting?.trim() || '1';
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 9) throw new Error(`KAFKA_NODES must be an integer from 1 to 9, got "${v}"`);
  return n;
}

/**
 * The local Kafka of `npm start`: one node in .local/kafka/node-1 (9092), or with KAFKA_NODES=N a
 * quorum of N nodes in .local/kafka/cluster-N/node-i on 9092, 9094, … (controllers on the odd ports
 * after each): its own data, since a quorum's metadata cannot grow out of a single node's.
 */
export async function startLocalKafka(nodesSetting: string | undefined): Promise<RunningBroker | RunningCluster> {
  const nodes = kafkaNodes(nodesSetting);
  if (nodes === 1) return startBroker({ home: join(local, 'kafka', 'node-1'), port: 9092, controllerPort: 9093 });
  const ports = Array.from({ length: nodes }, (_, i) => ({ port: 9092 + 2 * i, controllerPort: 9093 + 2 * i }));
  return startCluster({ nodes, home: join(local, 'kafka', `cluster-${nodes}`), ports, heapMb: 512 });
}
