// The stack behind the README's two commands (and hubctl, bench). Runs on Node 24, started by
// bootstrap.mjs. Provisions Kafka and Postgres (or uses KAFKA_BROKERS / DATABASE_URL), creates the
// topics and runs the migrations, then starts the services (start) or runs the test suite (test).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { configReader, readKafkaSecurity } from '@hub/config';
import { createKafkaEventLog, ensureTopics, readTopicDefinitions, verifyKafkaAccessAtStart } from '@hub/event-log';
import { createLogger } from '@hub/observability';
import { createPool, ensureDatabase, migrate } from '@hub/store';
import { startBroker, startLocalKafka, stopStaleBroker, type RunningBroker, type RunningCluster } from './kafka.ts';
import { MEMORY_ENV, nodeMemoryFlags } from './node-memory.ts';
import { local, migrationsDir, root, stackEnvFile, topicsFile } from './paths.ts';
import { provideDatabase, type Database } from './postgres.ts';
import { freePort, say, stopProcess } from './proc.ts';
import { secretKey } from './secret-key.ts';
import { isProblem, runChild, stopWhenOrphaned, waitForHealth } from './supervise.ts';
import { runTests, TIERS } from './test-tiers.ts';

const node = process.execPath;


interface Stack {
  readonly brokers: string;
  readonly db: Database;
  readonly broker: RunningBroker | RunningCluster | undefined;
  stop(): Promise<void>;
}

/** kafka false: Postgres only (the cluster tier's files start their own brokers). */
async function provideStack(mode: 'start' | 'test', kafka = true): Promise<Stack> {
  let broker: RunningBroker | RunningCluster | undefined;
  let brokers = process.env['KAFKA_BROKERS'];
  const db = await provideDatabase(process.env['DATABASE_URL']);
  try {
    if (!kafka) {
      brokers = '';
    } else if (!brokers) {
      if (mode === 'start') {
        broker = await startLocalKafka(process.env['KAFKA_NODES']);
      } else {
        // The test stack gets its own broker, fresh data and free ports: a running `npm start` is untouched.
        const home = join(local, 'kafka', 'test');
        await stopStaleBroker(home);
        rmSync(home, { recursive: true, force: true });
        broker = await startBroker({ home, port: await freePort(), controllerPort: await freePort(), heapMb: 768 });
      }
      brokers = broker.brokers;
      const pids = 'nodes' in broker ? broker.nodes.map((n) => n.pid).join(', ') : String(broker.pid);
      say(`Kafka ${mode === 'start' ? '' : '(test) '}${'nodes' in broker ? `cluster of ${broker.nodes.length} nodes` : 'broker'} up at ${brokers} (pid ${pids})`);
    } else {
      say(`using Kafka at ${brokers}`);
    }
  } catch (e) {
    await db.stop();
    throw e;
  }
  const resolved = brokers;
  return {
    brokers: resolved,
    db,
    broker,
    async stop() {
      if (broker) {
        say('stopping Kafka');
        await broker.stop();
      }
      await db.stop();
    },
  };
}

async function prepare(brokers: string, databaseUrl: string, topicPrefix = ''): Promise<void> {
  const logger = createLogger({ service: 'stack', level: 'warn' });
  if ((await ensureDatabase(databaseUrl)) === 'created') say(`created database ${new URL(databaseUrl).pathname.slice(1)}`);
  const pool = createPool(databaseUrl, { max: 1, application: 'ocpi-hub-stack', onIdleError: (err) => logger.warn('idle Postgres connection lost', { err }) });
  try {
    const applied = await migrate(pool, migrationsDir);
    if (applied.length > 0) say(`migrations applied: ${applied.join(', ')}`);
  } finally {
    await pool.end();
  }
  // A secured cluster (KAFKA_SSL_*, KAFKA_SASL_*; the services read the same variables): a refused
  // certificate or login fails the set-up with its one clear message.
  const r = configReader(process.env);
  const kafkaSecurity = readKafkaSecurity(r);
  r.done();
  const kafkaOptions = { brokers: brokers.split(','), ...kafkaSecurity, clientId: 'stack', logger, topicPrefix };
  await verifyKafkaAccessAtStart(kafkaOptions);
  const log = createKafkaEventLog(kafkaOptions);
  const admin = log.admin();
  await admin.connect();
  try {
    const clamped: string[] = [];
    const created = await ensureTopics(admin, readTopicDefinitions(topicsFile), topicPrefix, (notice) => {
      // Fewer replicas than defined is what a one-broker development stack is: one line, not a warning per topic.
      if (notice.kind === 'replicas-clamped') clamped.push(notice.topic);
      else say(`warning: ${notice.message}`);
    });
    if (created.length > 0) say(`topics created: ${created.join(', ')}`);
    if (clamped.length > 0) say(`${clamped.length} topics got fewer replicas than infra/topics.json defines (a single-broker stack); KAFKA_NODES=3 npm start or KAFKA_BROKERS=<cluster> gives them their real replication`);
  } finally {
    await log.close();
  }
}

const SERVICES = ['ingress', 'projector', 'dispatcher', 'prober'] as const;
const OPERATOR_PORTS: Record<(typeof SERVICES)[number], number> = { ingress: 9464, projector: 9465, dispatcher: 9466, prober: 9467 };

async function start(): Promise<void> {
  const startedAt = Date.now();
  const stack = await provideStack('start');
  const databaseUrl = process.env['DATABASE_URL'] ?? stack.db.url('ocpi_hub');
  const topicPrefix = process.env['TOPIC_PREFIX'] ?? '';
  const children = new Map<string, ChildProcess>();
  let stopping = false;

  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping services');
    await Promise.all([...children.values()].map((c) => stopProcess(c, 10_000)));
    await stack.stop();
    rmSync(stackEnvFile, { force: true });
    say('stopped');
    process.exit(code);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => void stopAll(0));
  stopWhenOrphaned(() => void stopAll(0));

  try {
    await prepare(stack.brokers, databaseUrl, topicPrefix);
  } catch (e) {
    say(`set-up failed: ${(e as Error).message}`);
    await stopAll(1);
    return;
  }
  const port = process.env['HUB_PORT'] ?? '8080';
  const env = {
    ...process.env,
    KAFKA_BROKERS: stack.brokers,
    DATABASE_URL: databaseUrl,
    HUB_SECRET_KEY: secretKey(),
    HUB_PORT: port,
  };
  writeFileSync(stackEnvFile, `KAFKA_BROKERS=${stack.brokers}\nDATABASE_URL=${databaseUrl}\n${topicPrefix ? `TOPIC_PREFIX=${topicPrefix}\n` : ''}`);
  // Services log to files; the terminal gets the banner and their warnings and errors (README, Running the hub).
  const logDir = process.env['HUB_LOG_DIR'] ?? join(local, 'logs');
  mkdirSync(logDir, { recursive: true });
  const operatorPort = (service: (typeof SERVICES)[number]) => Number(process.env[`${service.toUpperCase()}_OPERATOR_PORT`] ?? OPERATOR_PORTS[service]);
  const launch = (service: (typeof SERVICES)[number], restarts = 0) => {
    const logFile = createWriteStream(join(logDir, `${service}.log`), { flags: 'a' });
    // Bounded heaps (node-memory.ts; README, Configuration, "Memory of the services").
    const child = spawn(node, [...process.execArgv, ...nodeMemoryFlags(service), join(root, 'services', service, 'src', 'main.ts')], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...MEMORY_ENV, ...env, OPERATOR_PORT: String(operatorPort(service)) },
    });
    children.set(service, child);
    const onLine = (line: string) => {
      if (isProblem(line)) process.stderr.write(`[${service}] ${line}\n`);
    };
    for (const stream of [child.stdout, child.stderr]) {
      stream.pipe(logFile, { end: false });
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', onLine);
    }
    child.on('exit', (code, signal) => {
      logFile.end();
      if (stopping) return;
      // A crashed service is restarted with backoff; the stack keeps running for the others.
      const delay = Math.min(30_000, 1000 * 2 ** restarts);
      say(`${service} exited (${signal ?? code}); restarting in ${delay} ms (log: ${join(logDir, `${service}.log`)})`);
      setTimeout(() => launch(service, restarts + 1), delay).unref();
    });
  };
  for (const s of SERVICES) launch(s);
  const base = process.env['HUB_PUBLIC_URL'] ?? `http://127.0.0.1:${port}`;
  // "ready" only once every service's own health check passes (its /healthz: Postgres, Kafka, its consumers).
  const unhealthy = await waitForHealth(SERVICES.map((s) => ({ service: s, url: `http://127.0.0.1:${operatorPort(s)}/healthz` })), 90_000);
  if (unhealthy.length > 0) {
    say(`not ready after 90 s: ${unhealthy.join(', ')} failed their health check; see ${logDir}/<service>.log (the stack keeps running and restarting them)`);
    return;
  }
  say(`ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  process.stdout.write(
    [
      '',
      `  OCPI roaming hub is running. Partner API: ${base}/ocpi/versions`,
      `  Operator endpoints: /metrics and /healthz on ports ${SERVICES.map(operatorPort).join(', ')}`,
      `  Service logs: ${logDir}/{${SERVICES.join(',')}}.log`,
      '',
      '  Register the first party (prints its initial token), in another terminal:',
      '    npm run hubctl -- party register --role CPO --country NL --party ABC --name "Example CPO"',
      '  The partner then POSTs its credentials to ' + `${base}/ocpi/2.2.1/credentials with that token.`,
      '  Ctrl-C stops every service and Kafka.',
      '',
    ].join('\n') + '\n',
  );
}

async function test(args: string[]): Promise<number> {
  return runTests(args, async (kafka) => {
    const stack = await provideStack('test', kafka);
    return {
      env: {
        ...process.env,
        TEST_KAFKA_BROKERS: stack.brokers,
        TEST_DATABASE_URL: stack.db.url('postgres'),
        TEST_BROKER_PID: stack.broker && 'pid' in stack.broker ? String(stack.broker.pid) : '',
      },
      stop: () => stack.stop(),
    };
  });
}

async function hubctl(args: string[]): Promise<number> {
  const env = { ...process.env };
  // Point at the running `npm start` stack unless the caller chose clusters explicitly.
  if (existsSync(stackEnvFile)) {
    for (const line of readFileSync(stackEnvFile, 'utf8').split('\n')) {
      const [k, ...v] = line.split('=');
      if (k && v.length > 0 && !env[k]) env[k] = v.join('=');
    }
  }
  // The development key of `npm start` (secret-key.ts), for hubctl partner check; never made here.
  if (!env['HUB_SECRET_KEY'] && existsSync(join(local, 'secret.key'))) env['HUB_SECRET_KEY'] = secretKey();
  return runChild(node, [...process.execArgv, ...nodeMemoryFlags('hubctl'), join(root, 'packages', 'hubctl', 'src', 'main.ts'), ...args], { ...MEMORY_ENV, ...env });
}

async function bench(args: string[]): Promise<number> {
  const [name = 'versions', ...rest] = args;
  const script = join(root, 'bench', `${name}.bench.ts`);
  if (!existsSync(script)) {
    say(`no benchmark bench/${name}.bench.ts`);
    return 2;
  }
  const stack = await provideStack('test');
  try {
    return await runChild(node, [...process.execArgv, script, ...rest], {
      ...process.env,
      TEST_KAFKA_BROKERS: stack.brokers,
      TEST_DATABASE_URL: stack.db.url('postgres'),
      TEST_BROKER_PID: stack.broker && 'pid' in stack.broker ? String(stack.broker.pid) : '',
    });
  } finally {
    await stack.stop();
  }
}

/** What `npm start|test|run bench -- --help` print; nothing is provisioned or started for them. */
const USAGE: Record<string, string> = {
  start: `usage: npm start
  Installs what is missing (Node 24, pnpm, dependencies, Kafka jars, the database), creates the
  topics, runs the migrations and starts ingress, projector, dispatcher and prober; Ctrl-C stops them.
  KAFKA_BROKERS and DATABASE_URL use existing clusters; KAFKA_NODES=3 starts a three-node Kafka;
  KAFKA_VERSION=3.9.1 starts the previous Kafka line instead of 4.4.0;
  HUB_PORT (8080) is the partner API's port. Configuration: docs/reference/configuration.md.
`,
  test: `usage: npm test [-- TIER [FILE...]]
  Runs lint, typecheck and every test tier against a real Kafka and Postgres it starts or finds.
  TIER is one of lint, ${Object.keys(TIERS).join(', ')}; FILEs narrow a tier to those files.
  KAFKA_VERSION=3.9.1 runs the tiers on the previous Kafka line (compat runs broker loss on it always).
`,
  bench: `usage: npm run bench -- NAME [ARGS...]
  Runs bench/NAME.bench.ts against a Kafka and Postgres of its own; each benchmark's header comment
  says its arguments. Benchmarks: README, Benchmarks.
`,
};

const [command, ...args] = process.argv.slice(2);
const help = command !== undefined && command !== 'hubctl' && (args.includes('--help') || args.includes('-h'));
try {
  if (help) process.stdout.write(USAGE[command] ?? `usage: npm start | npm test | npm run hubctl | npm run bench\n`);
  else switch (command) {
    case 'start':
      await start();
      break;
    case 'test':
      process.exitCode = await test(args);
      break;
    case 'hubctl':
      process.exitCode = await hubctl(args);
      break;
    case 'bench':
      process.exitCode = await bench(args);
      break;
    case 'image':
      await (await import('../image/build.ts')).buildImage();
      break;
    default:
      say(`unknown command ${command}; use start, test, hubctl, bench or image`);
      process.exitCode = 2;
  }
} catch (e) {
  say(`failed: ${(e as Error).message}`);
  process.exitCode = 1;
}
