// The stack behind the README's two commands (and hubctl, bench). Runs on Node 24, started by
// bootstrap.mjs. Provisions Kafka and Postgres (or uses KAFKA_BROKERS / DATABASE_URL), creates the
// topics and runs the migrations, then starts the services (start) or runs the test suite (test).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { configReader, readKafkaSecurity } from '@hub/config';
import { createKafkaEventLog, ensureTopics, readTopicDefinitions, verifyKafkaAccessAtStart } from '@hub/event-log';
import { createLogger } from '@hub/observability';
import { createPool, dropDatabase, ensureDatabase, migrate } from '@hub/store';
import { startBroker, startLocalKafka, stopStaleBroker, type RunningBroker, type RunningCluster } from './kafka.ts';
import { MEMORY_ENV, nodeMemoryFlags } from './node-memory.ts';
import { local, migrationsDir, root, sandboxKafkaHome, sandboxSecretKeyFile, sandboxStackEnvFile, sandboxStateFile, stackEnvFile, topicsFile } from './paths.ts';
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

/** Where a running stack's Kafka and Postgres come from: given clusters, or started here. */
interface StackSource {
  readonly brokers: string | undefined;
  readonly databaseUrl: string | undefined;
  readonly startKafka: () => Promise<RunningBroker | RunningCluster>;
}

const HUB_SOURCE: StackSource = {
  brokers: process.env['KAFKA_BROKERS'],
  databaseUrl: process.env['DATABASE_URL'],
  startKafka: () => startLocalKafka(process.env['KAFKA_NODES']),
};

/** kafka false: Postgres only (the cluster tier's files start their own brokers). */
async function provideStack(mode: 'start' | 'test', kafka = true, source: StackSource = HUB_SOURCE): Promise<Stack> {
  let broker: RunningBroker | RunningCluster | undefined;
  let brokers = source.brokers;
  const db = await provideDatabase(source.databaseUrl);
  try {
    if (!kafka) {
      brokers = '';
    } else if (!brokers) {
      if (mode === 'start') {
        broker = await source.startKafka();
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
type Service = (typeof SERVICES)[number];
const OPERATOR_PORTS: Record<Service, number> = { ingress: 9464, projector: 9465, dispatcher: 9466, prober: 9467 };

/**
 * What `npm start` and `npm run sandbox` run differently: the sandbox hub has its own Kafka broker
 * (or topic prefix on given brokers), database, development key, ports, logs and stack.env, so the
 * two never share data and can run side by side (docs/how-to/sandbox.md; decision 0011).
 */
interface Profile {
  readonly name: 'hub' | 'sandbox';
  readonly source: StackSource;
  readonly databaseName: string;
  readonly topicPrefix: string;
  readonly port: string;
  readonly operatorPort: (service: Service) => number;
  readonly secretKey: () => string;
  readonly logDir: string;
  readonly stackEnvFile: string;
  /** Set for the services beyond the common ones (the sandbox's marker and outbound policy). */
  readonly serviceEnv: Readonly<Record<string, string>>;
}

const HUB_PROFILE: Profile = {
  name: 'hub',
  source: HUB_SOURCE,
  databaseName: 'ocpi_hub',
  topicPrefix: process.env['TOPIC_PREFIX'] ?? '',
  port: process.env['HUB_PORT'] ?? '8080',
  operatorPort: (service) => Number(process.env[`${service.toUpperCase()}_OPERATOR_PORT`] ?? OPERATOR_PORTS[service]),
  secretKey: () => secretKey(),
  logDir: process.env['HUB_LOG_DIR'] ?? join(local, 'logs'),
  stackEnvFile,
  serviceEnv: {},
};

const SANDBOX_PORTS = { hub: 8090, counterparts: 8091, kafka: 9192, kafkaController: 9193, operatorOffset: 10 } as const;

function sandboxProfile(): Profile {
  const env = process.env;
  return {
    name: 'sandbox',
    source: {
      brokers: env['SANDBOX_KAFKA_BROKERS'],
      databaseUrl: env['SANDBOX_DATABASE_URL'],
      startKafka: () => startBroker({ home: sandboxKafkaHome, port: SANDBOX_PORTS.kafka, controllerPort: SANDBOX_PORTS.kafkaController, heapMb: 512 }),
    },
    databaseName: 'ocpi_hub_sandbox',
    topicPrefix: env['SANDBOX_TOPIC_PREFIX'] ?? 'sandbox',
    port: env['SANDBOX_HUB_PORT'] ?? String(SANDBOX_PORTS.hub),
    operatorPort: (service) => OPERATOR_PORTS[service] + SANDBOX_PORTS.operatorOffset,
    secretKey: () => secretKey(env['SANDBOX_SECRET_KEY'], sandboxSecretKeyFile),
    logDir: join(local, 'logs', 'sandbox'),
    stackEnvFile: sandboxStackEnvFile,
    // The counterparts are plain-http servers on loopback (README, Onboarding: a development hub).
    serviceEnv: {
      HUB_SANDBOX: 'true',
      ALLOW_HTTP_PARTNER_URLS: env['ALLOW_HTTP_PARTNER_URLS'] ?? 'true',
      PARTNER_ALLOWED_HOSTS: env['PARTNER_ALLOWED_HOSTS'] ?? '127.0.0.1,localhost',
    },
  };
}

/** `npm run sandbox -- --fresh`: forgets every sandbox datum (database, own broker's data, counterparts' tokens). */
async function forgetSandbox(profile: Profile): Promise<void> {
  const db = await provideDatabase(profile.source.databaseUrl);
  try {
    await dropDatabase(profile.source.databaseUrl ?? db.url(profile.databaseName));
  } finally {
    await db.stop();
  }
  if (!profile.source.brokers) {
    await stopStaleBroker(sandboxKafkaHome);
    rmSync(sandboxKafkaHome, { recursive: true, force: true });
  }
  rmSync(sandboxStateFile, { force: true });
  say('sandbox data removed (database, Kafka data, counterparts\' tokens)');
}

async function start(profile: Profile = HUB_PROFILE): Promise<void> {
  const startedAt = Date.now();
  const sandbox = profile.name === 'sandbox';
  const stack = await provideStack('start', true, profile.source);
  const databaseUrl = profile.source.databaseUrl ?? stack.db.url(profile.databaseName);
  const topicPrefix = profile.topicPrefix;
  const children = new Map<string, ChildProcess>();
  let stopping = false;

  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping services');
    await Promise.all([...children.values()].map((c) => stopProcess(c, 10_000)));
    await stack.stop();
    rmSync(profile.stackEnvFile, { force: true });
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
  const port = profile.port;
  const env = {
    ...process.env,
    ...profile.serviceEnv,
    KAFKA_BROKERS: stack.brokers,
    DATABASE_URL: databaseUrl,
    HUB_SECRET_KEY: profile.secretKey(),
    HUB_PORT: port,
    ...(topicPrefix ? { TOPIC_PREFIX: topicPrefix } : {}),
  };
  mkdirSync(dirname(profile.stackEnvFile), { recursive: true });
  writeFileSync(profile.stackEnvFile, `KAFKA_BROKERS=${stack.brokers}\nDATABASE_URL=${databaseUrl}\n${topicPrefix ? `TOPIC_PREFIX=${topicPrefix}\n` : ''}`);
  // Services log to files; the terminal gets the banner and their warnings and errors (README, Running the hub).
  const logDir = profile.logDir;
  mkdirSync(logDir, { recursive: true });
  const operatorPort = profile.operatorPort;
  const launch = (service: Service | 'sandbox', restarts = 0) => {
    const logFile = createWriteStream(join(logDir, `${service}.log`), { flags: 'a' });
    const script = service === 'sandbox' ? join(root, 'packages', 'sandbox', 'src', 'main.ts') : join(root, 'services', service, 'src', 'main.ts');
    const childEnv = service === 'sandbox'
      ? { ...env, SANDBOX_HUB_URL: `http://127.0.0.1:${port}`, SANDBOX_PORT: process.env['SANDBOX_PORT'] ?? String(SANDBOX_PORTS.counterparts), SANDBOX_STATE_FILE: sandboxStateFile }
      : { ...MEMORY_ENV, ...env, OPERATOR_PORT: String(operatorPort(service)) };
    // Bounded heaps (node-memory.ts; README, Configuration, "Memory of the services").
    const child = spawn(node, [...process.execArgv, ...(service === 'sandbox' ? [] : nodeMemoryFlags(service)), script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnv,
    });
    children.set(service, child);
    // The sandbox counterparts narrate what they do (a newcomer watches a session end in a CDR).
    const onLine = (line: string) => {
      if (service === 'sandbox') {
        const shown = sandboxLine(line);
        if (shown) process.stderr.write(`[sandbox] ${shown}\n`);
      } else if (isProblem(line)) process.stderr.write(`[${service}] ${line}\n`);
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
  if (sandbox) launch('sandbox');
  say(`ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  const hubctlCmd = sandbox ? 'npm run hubctl -- --sandbox' : 'npm run hubctl --';
  process.stdout.write(
    [
      '',
      sandbox
        ? `  OCPI roaming hub SANDBOX is running (answers carry X-Hub-Environment: sandbox). Partner API: ${base}/ocpi/versions`
        : `  OCPI roaming hub is running. Partner API: ${base}/ocpi/versions`,
      ...(sandbox
        ? [
            `  Sandbox CPO NL/SBX and sandbox eMSP DE/SBX: http://127.0.0.1:${process.env['SANDBOX_PORT'] ?? SANDBOX_PORTS.counterparts}/sandbox`,
            '  Every party you register is routed to the counterpart of the other role. Guide: docs/how-to/sandbox.md',
          ]
        : []),
      `  Operator endpoints: /metrics and /healthz on ports ${SERVICES.map(operatorPort).join(', ')}`,
      `  Service logs: ${logDir}/{${[...SERVICES, ...(sandbox ? ['sandbox'] : [])].join(',')}}.log`,
      '',
      '  Register the first party (prints its initial token), in another terminal:',
      `    ${hubctlCmd} party register --role ${sandbox ? 'EMSP' : 'CPO'} --country NL --party ABC --name "Example ${sandbox ? 'eMSP' : 'CPO'}"`,
      '  The partner then POSTs its credentials to ' + `${base}/ocpi/2.2.1/credentials with that token.`,
      '  Ctrl-C stops every service and Kafka.',
      '',
    ].join('\n') + '\n',
  );
}

/** A sandbox log line as the terminal shows it: its message and fields, or nothing for debug lines. */
function sandboxLine(line: string): string | undefined {
  if (line.trim() === '') return undefined;
  try {
    const { level, message, service: _s, timestamp: _t, ...fields } = JSON.parse(line) as Record<string, unknown>;
    if (level === 'debug') return undefined;
    const rest = Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
    return `${level === 'info' ? '' : `${String(level)}: `}${String(message)}${rest}`;
  } catch {
    return line;
  }
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

async function hubctl(given: string[]): Promise<number> {
  // `npm run hubctl -- --sandbox ...` administers the running `npm run sandbox` stack, with its key.
  const sandbox = given.includes('--sandbox');
  const args = given.filter((a) => a !== '--sandbox');
  const env = { ...process.env };
  const envFile = sandbox ? sandboxStackEnvFile : stackEnvFile;
  if (sandbox) {
    // The sandbox's own clusters and outbound policy, never the production ones the shell may name.
    for (const k of ['KAFKA_BROKERS', 'DATABASE_URL', 'TOPIC_PREFIX', 'HUB_SECRET_KEY']) delete env[k];
    if (!existsSync(envFile)) {
      say('no sandbox is running (start it with `npm run sandbox`)');
      return 2;
    }
    const policy = sandboxProfile().serviceEnv;
    env['ALLOW_HTTP_PARTNER_URLS'] ??= policy['ALLOW_HTTP_PARTNER_URLS'];
    env['PARTNER_ALLOWED_HOSTS'] ??= policy['PARTNER_ALLOWED_HOSTS'];
  }
  // Point at the running `npm start` stack unless the caller chose clusters explicitly.
  if (existsSync(envFile)) {
    for (const line of readFileSync(envFile, 'utf8').split('\n')) {
      const [k, ...v] = line.split('=');
      if (k && v.length > 0 && !env[k]) env[k] = v.join('=');
    }
  }
  // The development key of `npm start` (secret-key.ts), for hubctl partner check; never made here.
  if (sandbox) {
    if (existsSync(sandboxSecretKeyFile) || process.env['SANDBOX_SECRET_KEY']) env['HUB_SECRET_KEY'] = secretKey(process.env['SANDBOX_SECRET_KEY'], sandboxSecretKeyFile);
  } else if (!env['HUB_SECRET_KEY'] && existsSync(join(local, 'secret.key'))) env['HUB_SECRET_KEY'] = secretKey();
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
  sandbox: `usage: npm run sandbox [-- --fresh]
  Starts a sandbox hub beside (or instead of) \`npm start\`'s: its own Kafka broker (port 9192), database
  ocpi_hub_sandbox, topic prefix "sandbox", key .local/sandbox/secret.key, partner API on 8090
  (SANDBOX_HUB_PORT), and the sandbox CPO NL/SBX and eMSP DE/SBX on 8091 (SANDBOX_PORT). Every party
  registered with \`npm run hubctl -- --sandbox party register ...\` is routed to the counterpart of
  the other role. --fresh forgets every sandbox datum first. Guide: docs/how-to/sandbox.md.
usage: npm run sandbox -- try-emsp --party CC/PID --token INITIAL_TOKEN
  Against a running sandbox: an eMSP simulator for the party you registered exchanges credentials,
  starts a session at the sandbox CPO, stops it and prints the CDR.
`,
  test: `usage: npm test [-- TIER [FILE...]]
  Runs lint, typecheck and every test tier against a real Kafka and Postgres it starts or finds.
  TIER is one of lint, ${Object.keys(TIERS).join(', ')}; FILEs narrow a tier to those files.
  KAFKA_VERSION=3.9.1 runs the tiers on the previous Kafka line (compat runs on it always).
`,
  bench: `usage: npm run bench -- NAME [ARGS...]
  Runs bench/NAME.bench.ts against a Kafka and Postgres of its own; each benchmark's header comment
  says its arguments. Benchmarks: README, Benchmarks.
`,
};

const [command, ...args] = process.argv.slice(2);
const help = command !== undefined && command !== 'hubctl' && (args.includes('--help') || args.includes('-h'));
try {
  if (help) process.stdout.write(USAGE[command] ?? `usage: npm start | npm run sandbox | npm test | npm run hubctl | npm run bench\n`);
  else switch (command) {
    case 'start':
      await start();
      break;
    case 'sandbox':
      // The newcomer's eMSP simulator against a running sandbox (docs/how-to/sandbox.md).
      if (args[0] === 'try-emsp') {
        process.exitCode = await runChild(node, [...process.execArgv, join(root, 'packages', 'sandbox', 'src', 'try-emsp.ts'), ...args.slice(1)]);
        break;
      }
      if (args.includes('--fresh')) await forgetSandbox(sandboxProfile());
      await start(sandboxProfile());
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
      say(`unknown command ${command}; use start, sandbox, test, hubctl, bench or image`);
      process.exitCode = 2;
  }
} catch (e) {
  say(`failed: ${(e as Error).message}`);
  process.exitCode = 1;
}
