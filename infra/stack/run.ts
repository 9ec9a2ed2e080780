// `npm start` and `npm run sandbox`: the services (and the sandbox's counterparts) on a provided stack,
// restarted when they crash, until Ctrl-C.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { dropDatabase } from '@hub/store';
import { startBroker } from './kafka.ts';
import { stopStaleBroker } from './stale-broker.ts';
import { MEMORY_ENV, nodeMemoryFlags } from './node-memory.ts';
import { atNiceness, launchNiceness, nicenessOf } from './node-priority.ts';
import { defaultSandboxDir, local, root, sandboxFiles, sandboxKafkaHome, stackEnvFile } from './paths.ts';
import { provideDatabase } from './postgres.ts';
import { say, stopProcess } from './proc.ts';
import { HUB_SOURCE, prepare, provideStack, type StackSource } from './provide.ts';
import { secretKey } from './secret-key.ts';
import { isProblem, stopWhenOrphaned, waitForHealth } from './supervise.ts';

const node = process.execPath;

const SERVICES = ['ingress', 'projector', 'dispatcher', 'prober'] as const;
type Service = (typeof SERVICES)[number];
const OPERATOR_PORTS: Record<Service, number> = { ingress: 9464, projector: 9465, dispatcher: 9466, prober: 9467 };

/**
 * What `npm start` and `npm run sandbox` run differently: the sandbox hub has its own Kafka broker
 * (or topic prefix on given brokers), database, development key, ports, logs and stack.env, so the
 * two never share data and can run side by side (docs/decisions/0011-sandbox-counterparts.md).
 */
export interface Profile {
  readonly name: 'hub' | 'sandbox';
  readonly source: StackSource;
  readonly databaseName: string;
  readonly topicPrefix: string;
  readonly port: string;
  readonly operatorPort: (service: Service) => number;
  readonly secretKey: () => string;
  readonly logDir: string;
  readonly stackEnvFile: string;
  /** The sandbox counterparts' tokens (SANDBOX_STATE_FILE of packages/sandbox). */
  readonly stateFile: string;
  readonly secretKeyFile: string;
  /** Set for the services beyond the common ones (the sandbox's marker and outbound policy). */
  readonly serviceEnv: Readonly<Record<string, string>>;
}

export const HUB_PROFILE: Profile = {
  name: 'hub',
  source: HUB_SOURCE,
  databaseName: 'ocpi_hub',
  topicPrefix: process.env['TOPIC_PREFIX'] ?? '',
  port: process.env['HUB_PORT'] ?? '8080',
  operatorPort: (service) => Number(process.env[`${service.toUpperCase()}_OPERATOR_PORT`] ?? OPERATOR_PORTS[service]),
  secretKey: () => secretKey(),
  logDir: process.env['HUB_LOG_DIR'] ?? join(local, 'logs'),
  stackEnvFile,
  stateFile: '',
  secretKeyFile: join(local, 'secret.key'),
  serviceEnv: {},
};

/** Spelt out, so docs/reference/configuration.md and its test find them. */
const SANDBOX_OPERATOR_PORT_VARIABLES: Record<Service, string> = {
  ingress: 'SANDBOX_INGRESS_OPERATOR_PORT',
  projector: 'SANDBOX_PROJECTOR_OPERATOR_PORT',
  dispatcher: 'SANDBOX_DISPATCHER_OPERATOR_PORT',
  prober: 'SANDBOX_PROBER_OPERATOR_PORT',
};
const SANDBOX_PORTS = { hub: 8090, counterparts: 8091, kafka: 9192, kafkaController: 9193, operatorOffset: 10 } as const;

export function sandboxProfile(): Profile {
  const env = process.env;
  // SANDBOX_DIR keeps a second sandbox of the same checkout apart (the launcher test runs one).
  const files = sandboxFiles(env['SANDBOX_DIR'] ?? defaultSandboxDir);
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
    operatorPort: (service) => Number(env[SANDBOX_OPERATOR_PORT_VARIABLES[service]] ?? OPERATOR_PORTS[service] + SANDBOX_PORTS.operatorOffset),
    secretKey: () => secretKey(env['SANDBOX_SECRET_KEY'], files.secretKeyFile),
    logDir: env['SANDBOX_LOG_DIR'] ?? join(local, 'logs', 'sandbox'),
    stackEnvFile: files.stackEnvFile,
    stateFile: files.stateFile,
    secretKeyFile: files.secretKeyFile,
    // The counterparts are plain-http servers on loopback (README, Onboarding: a development hub).
    serviceEnv: {
      HUB_SANDBOX: 'true',
      ALLOW_HTTP_PARTNER_URLS: env['ALLOW_HTTP_PARTNER_URLS'] ?? 'true',
      PARTNER_ALLOWED_HOSTS: env['PARTNER_ALLOWED_HOSTS'] ?? '127.0.0.1,localhost',
    },
  };
}

/** `npm run sandbox -- --fresh`: forgets every sandbox datum (database, own broker's data, counterparts' tokens). */
export async function forgetSandbox(profile: Profile): Promise<void> {
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
  rmSync(profile.stateFile, { force: true });
  say('sandbox data removed (database, Kafka data, counterparts\' tokens)');
}

// Long because: the supervisor of `npm start`: its service launcher, restart backoff and stop handler
// share the map of running children and the stopping flag; the rest is the ready banner.
export async function start(profile: Profile = HUB_PROFILE): Promise<void> {
  const startedAt = Date.now();
  const sandbox = profile.name === 'sandbox';
  // Read before anything starts: a refused setting must not leave Kafka running.
  const niceness = Object.fromEntries(SERVICES.map((s) => [s, launchNiceness(s, process.env)])) as Record<Service, number>;
  if (niceness.projector < nicenessOf('projector', process.env)) say('nice(1) is not on PATH: the projector runs at the other services\' priority (docs/decisions/0018-partners-before-the-projector.md)');
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
    // V8's compile cache (keyed by file content): a restarted service parses the TypeScript it ran before
    // in about two thirds of the CPU (infra/stack/test-tiers.ts has the figures).
    const cached = { NODE_COMPILE_CACHE: join(local, 'compile-cache'), ...env };
    const childEnv = service === 'sandbox'
      ? { ...cached, SANDBOX_HUB_URL: `http://127.0.0.1:${port}`, SANDBOX_PORT: process.env['SANDBOX_PORT'] ?? String(SANDBOX_PORTS.counterparts), SANDBOX_STATE_FILE: profile.stateFile }
      : { ...MEMORY_ENV, ...cached, OPERATOR_PORT: String(operatorPort(service)) };
    // Bounded heaps (node-memory.ts; docs/how-to/bound-memory.md); the projector behind the ingress (node-priority.ts).
    const args = [...process.execArgv, ...(service === 'sandbox' ? [] : nodeMemoryFlags(service)), script];
    const launched = atNiceness(service === 'sandbox' ? 0 : niceness[service], node, args);
    const child = spawn(launched.command, launched.args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnv,
    });
    // A command that cannot be spawned emits 'error' and no 'exit': said, not an unhandled crash of the launcher.
    child.once('error', (e) => say(`${service} did not start: ${e.message}`));
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
            '  Every party you register is routed to the counterpart of the other role once it has exchanged credentials. Guide: docs/how-to/sandbox.md',
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
