// The tiers of `npm test` (docs/how-to/tests.md): which files each runs, in what order, and what they need.
// `npm test` runs them all; `npm test -- <tier> [FILE...]` one tier (or only the files named).
import { join } from 'node:path';
import { buildImage } from '../image/build.ts';
import { ensureKafkaJars, KAFKA_3_VERSION } from './kafka-dist.ts';
import { local, root } from './paths.ts';
import { say } from './proc.ts';
import { generateTypes, runChild } from './supervise.ts';

const node = process.execPath;
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

interface Tier {
  readonly globs: readonly string[];
  readonly title: string;
  /** The shared test stack (Postgres, and one Kafka broker unless kafka is false). */
  readonly stack?: { readonly kafka: boolean };
  /** Files run side by side; the cluster tier runs one at a time (each starts three brokers). */
  readonly concurrency?: number;
  readonly timeoutMs?: number;
  /** Set for this tier's files only (the compat tier's KAFKA_VERSION). */
  readonly env?: Readonly<Record<string, string>>;
}

export const TIERS = {
  unit: { title: 'unit tests', globs: ['packages/*/test/**/*.unit.test.ts', 'services/*/test/**/*.unit.test.ts', 'infra/test/**/*.unit.test.ts', 'schemas/test/**/*.unit.test.ts'] },
  // Three files side by side (two cores): most of an integration or e2e file's time is waiting on
  // services, brokers and timeouts, not CPU. The integration and e2e run (465 tests) took 746 s at
  // three, run alone, against 995 s at two within a whole-suite run, the image building beside it
  // (this machine, 2026-11-28, all passing both times).
  integration: { title: 'integration tests (real Kafka and Postgres)', stack: { kafka: true }, concurrency: 3, globs: ['packages/*/test/**/*.int.test.ts', 'services/*/test/**/*.int.test.ts', 'infra/test/**/*.int.test.ts', 'test/store/*.int.test.ts'] },
  e2e: { title: 'end-to-end tests (real services, Kafka and Postgres)', stack: { kafka: true }, concurrency: 3, globs: ['test/*.e2e.test.ts'] },
  // Seeded, bounded fuzzing of the partner API on the real services: after e2e.
  fuzz: { title: 'fuzz tests (real services, Kafka and Postgres)', stack: { kafka: true }, globs: ['test/**/*.fuzz.test.ts'] },
  // The OCI image's services under buildah (test/image/): the image is built first, each run, from
  // the working tree (infra/image/build.ts; the root file system is cached in .local/image/).
  image: { title: 'image tests (the OCI image\'s services under buildah, real Kafka and Postgres)', stack: { kafka: true }, globs: ['test/image/*.image.test.ts'], concurrency: 1 },
  // Broker loss and replicated services on three-node quorums each test file starts.
  cluster: { title: 'cluster tests (three Kafka brokers per file, real services and Postgres)', stack: { kafka: false }, globs: ['test/cluster/*.cluster.test.ts'], concurrency: 1, timeoutMs: 480_000 },
  // The previous Kafka line (a managed 3.x cluster) on what differs by broker release: leader and
  // controller SIGKILL under load on a three-node quorum (its replicated topics, RF 3 and
  // min.insync.replicas 2, are what kafka-cluster.int checks on 4.x, so that file is not run twice),
  // and the SASL_SSL listener with SCRAM credentials formatted into the metadata. A second whole
  // cluster tier would not fit the suite's time; the replicas file (service replicas, the brokers
  // untouched) runs on 4.x only, and on 3.9.1 with `KAFKA_VERSION=3.9.1 npm test -- cluster`
  // (docs/how-to/tests.md).
  compat: {
    title: `Kafka ${KAFKA_3_VERSION} (KAFKA_VERSION=${KAFKA_3_VERSION}): broker loss on a three-node quorum, SASL_SSL with SCRAM`,
    stack: { kafka: false },
    globs: ['infra/test/kafka-secured.int.test.ts', 'test/cluster/broker-loss.cluster.test.ts'],
    concurrency: 1,
    timeoutMs: 480_000,
    env: { KAFKA_VERSION: KAFKA_3_VERSION },
  },
} satisfies Record<string, Tier>;

export type TierName = keyof typeof TIERS;

export interface TestStackEnv {
  readonly env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

/**
 * `npm test [-- tier [FILE...]]`. provideStack starts the shared test stack (its own broker, fresh
 * data, free ports) once, for every tier after unit that needs it.
 */
export async function runTests(args: string[], provideStack: (kafka: boolean) => Promise<TestStackEnv>): Promise<number> {
  const started = Date.now();
  await generateTypes();
  const only = args[0];
  if (only && only !== 'lint' && !(only in TIERS)) {
    say(`unknown test tier ${only}; use ${['lint', ...Object.keys(TIERS)].join(', ')}`);
    return 2;
  }
  if (!only || only === 'lint') {
    say('lint');
    if ((await runChild(bin('eslint'), ['--max-warnings=0', '.'])) !== 0) return 1;
    say('typecheck');
    if ((await runChild(bin('tsc'), ['-p', 'tsconfig.json'])) !== 0) return 1;
  }
  // The whole suite runs integration and end-to-end files side by side, as one run.
  const runs: TierName[][] = only === 'lint' ? [] : only ? [[only as TierName]] : [['unit'], ['integration', 'e2e'], ['fuzz'], ['image'], ['cluster'], ['compat']];
  const tiers = runs.flat();
  // The image is built while the tiers before it run (its cost is mostly disk and network, theirs
  // CPU); its tier waits for it, and fails with it: it never runs, or skips, without a fresh image.
  const image = tiers.includes('image') ? buildImage().then(() => true, (e: Error) => (say(`image build failed: ${e.message}`), false)) : undefined;
  // No --test-force-exit: with process isolation it ends test files before all their tests have
  // reported (seen on Node 24: 248 to 263 of 279 unit tests, nondeterministically, with no failure).
  // A test file that leaks a handle fails by --test-timeout instead.
  const nodeTest = (tier: Tier, globs: readonly string[], env: NodeJS.ProcessEnv) =>
    runChild(node, [...process.execArgv, '--test', '--test-reporter=spec', `--test-concurrency=${tier.concurrency ?? 2}`, `--test-timeout=${tier.timeoutMs ?? 300_000}`, ...globs], env);
  let stack: TestStackEnv | undefined;
  try {
    for (const run of runs) {
      const tier: Tier = TIERS[run[0] ?? 'unit'];
      if (tier.stack && !stack) stack = await provideStack(tiers.some((t) => (TIERS[t] as Tier).stack?.kafka));
      const files = only ? args.slice(1) : [];
      if (run.includes('image') && !(await image)) return 1;
      say(run.map((t) => TIERS[t].title).join('; '));
      const runStarted = Date.now();
      // Every test file and every service or hubctl a test spawns is a Node process that parses the
      // repository's TypeScript anew: V8's compile cache (keyed by file content) saves about a third of
      // each start's CPU (1.9 s to 1.2 s for hubctl here), and the e2e tier starts hundreds of them.
      const env = { ...(stack?.env ?? process.env), ...tier.env, NODE_COMPILE_CACHE: join(local, 'compile-cache') };
      // Its jars fetched before its files start (their set-up timeouts are for the brokers).
      if (tier.env?.['KAFKA_VERSION']) await ensureKafkaJars(tier.env['KAFKA_VERSION']);
      const code = await nodeTest(tier, files.length > 0 ? files : run.flatMap((t) => TIERS[t].globs), env);
      say(`${run.join(' and ')} finished in ${((Date.now() - runStarted) / 1000).toFixed(0)} s`);
      if (code !== 0) return code;
    }
    if (tiers.length > 1) say(`test suite finished in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return 0;
  } finally {
    // A failure before the image tier leaves the build running: it ends before the stack does.
    await image;
    await stack?.stop();
  }
}
