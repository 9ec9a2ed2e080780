// The stack behind the README's commands (start, sandbox, test; and hubctl, bench). Runs on Node 24, started by
// bootstrap.mjs. Provisions Kafka and Postgres (or uses KAFKA_BROKERS / DATABASE_URL), creates the
// topics and runs the migrations, then starts the services (start) or runs the test suite (test).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MEMORY_ENV, nodeMemoryFlags } from './node-memory.ts';
import { nicenessOf } from './node-priority.ts';
import { local, root, stackEnvFile } from './paths.ts';
import { say } from './proc.ts';
import { provideStack } from './provide.ts';
import { forgetSandbox, sandboxProfile, start } from './run.ts';
import { secretKey } from './secret-key.ts';
import { runChild } from './supervise.ts';
import { runTests, TIERS } from './test-tiers.ts';

const node = process.execPath;

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
  const profile = sandbox ? sandboxProfile() : undefined;
  const envFile = profile ? profile.stackEnvFile : stackEnvFile;
  if (sandbox) {
    // The sandbox's own clusters and outbound policy, never the production ones the shell may name.
    for (const k of ['KAFKA_BROKERS', 'DATABASE_URL', 'TOPIC_PREFIX', 'HUB_SECRET_KEY']) delete env[k];
    if (!existsSync(envFile) && !args.includes('--help')) {
      say('no sandbox is running (start it with `npm run sandbox`)');
      return 2;
    }
    const policy = profile?.serviceEnv ?? {};
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
    if (profile && (existsSync(profile.secretKeyFile) || process.env['SANDBOX_SECRET_KEY'])) env['HUB_SECRET_KEY'] = profile.secretKey();
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
  the other role once it has exchanged credentials. --fresh forgets every sandbox datum first. Guide: docs/how-to/sandbox.md.
usage: npm run sandbox -- try-emsp --party CC/PID --token INITIAL_TOKEN
  Against a running sandbox: an eMSP simulator for the party you registered exchanges credentials,
  starts a session at the sandbox CPO, stops it and prints the CDR.
`,
  partner: `usage: npm run partner -- cpo|emsp --party CC/PID --token INITIAL_TOKEN [--hub URL]
  A partner platform for a first session (README): it exchanges credentials with the initial token
  hubctl printed, then as a CPO pushes one location, or as an eMSP pulls the locations it is routed to
  and prints them; then it exits. --hub defaults to http://127.0.0.1:8080 (npm start's partner API).
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
  // Refused before anything is provisioned or wiped (`sandbox --fresh`), not when the projector starts.
  if (!help && (command === 'start' || command === 'sandbox' || command === 'bench')) nicenessOf('projector', process.env);
  if (help) process.stdout.write(USAGE[command] ?? `usage: npm start | npm run sandbox | npm run partner | npm test | npm run hubctl | npm run bench\n`);
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
    case 'partner':
      process.exitCode = await runChild(node, [...process.execArgv, join(root, 'packages', 'sandbox', 'src', 'try-partner.ts'), ...args]);
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
      say(`unknown command ${command}; use start, sandbox, partner, test, hubctl, bench or image`);
      process.exitCode = 2;
  }
} catch (e) {
  say(`failed: ${(e as Error).message}`);
  process.exitCode = 1;
}
