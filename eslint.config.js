// Lint is part of `npm test`. typescript-eslint's type-aware rules catch floating promises and
// misused async code, the mistakes that lose data in consumers and handlers.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '.local/**', 'schemas/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'infra/stack/*.mjs'] }, tsconfigRootDir: import.meta.dirname },
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', fetch: 'readonly', AbortSignal: 'readonly' },
    },
    rules: {
      // node:test's describe/it return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }] },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/require-await': 'off',
      'no-console': 'error',
      'hub/no-issue-references': 'error',
    },
    plugins: { hub: { rules: { 'no-issue-references': noIssueReferences() } } },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  // Small files, each about one thing: no source file over 300 lines. Tests, benchmarks and generated
  // types are not held to it.
  {
    files: ['services/*/src/**/*.ts', 'packages/*/src/**/*.ts', 'infra/stack/**/*.ts', 'infra/stack/**/*.mjs', 'schemas/*.ts'],
    rules: { 'max-lines': ['error', { max: 300 }] },
  },
  // Adapters own their drivers: the Kafka client only in packages/event-log, the Postgres driver only
  // in packages/store (their tests included). Everything else uses their ports; packages/testing may
  // name pg's types (the test stack's Database is a pg Pool to the tests' own SQL checks), not load pg.
  // The ports, records and domain rules are @hub/core's, which does no I/O and imports no adapter;
  // adapters implement its ports and import no service (docs/explanation/architecture.md, Packages).
  ...dependencyDirection(),
);

function dependencyDirection() {
  const kafka = { group: ['kafkajs', 'kafkajs/*', '@platformatic/kafka', '@platformatic/kafka/*'], message: 'the Kafka client belongs to packages/event-log: use the EventLog port (@hub/core; @hub/event-log subscribe, append), its TopicAdmin or readTopics.' };
  const postgres = { group: ['pg', 'pg/*', 'pg-*', '@databases/pg', '@databases/pg/*'], message: 'the Postgres driver belongs to packages/store: use its stores and its opaque Database handle.' };
  const coreDependencies = {
    group: ['@hub/*', '!@hub/core', '!@hub/ocpi', '!@hub/events', '../../**', '**/services/**', '**/packages/**'],
    message: '@hub/core depends only on @hub/ocpi and @hub/events: adapters and services depend on it, never the other way round.',
  };
  const coreIo = {
    group: ['@platformatic/*', 'undici', 'undici/*', 'express', 'express/*', 'winston', 'prom-client', 'node:fs', 'node:fs/*', 'fs', 'fs/*', 'node:net', 'net', 'node:http', 'node:https', 'http', 'https', 'node:http2', 'node:dns', 'node:child_process', 'child_process'],
    message: '@hub/core does no I/O: drivers, servers and the file system belong to the adapters (event-log, store, partners) and services.',
  };
  const noServices = {
    group: ['@hub/service-kit', '@hub/service-kit/*', '@hub/ingress', '@hub/dispatcher', '@hub/prober', '@hub/projector', '**/services/**'],
    message: 'an adapter implements @hub/core ports and imports no service (nor @hub/service-kit).',
  };
  const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
  // One entry per folder: a later no-restricted-imports entry replaces an earlier one for the same file.
  const zones = [
    { files: ['packages/core/**'], patterns: [kafka, postgres, coreDependencies, coreIo] },
    { files: ['packages/event-log/**'], patterns: [postgres, noServices] },
    { files: ['packages/store/**'], patterns: [kafka, noServices] },
    { files: ['packages/partners/**'], patterns: [kafka, postgres, noServices] },
    { files: ['packages/testing/**'], patterns: [kafka], typesOnly: [postgres] },
  ];
  // typescript-eslint's form of the rule, which can let a pattern's type imports through.
  const typeImportsOnly = (patterns) => ({ '@typescript-eslint/no-restricted-imports': ['error', { patterns: patterns.map((p) => ({ ...p, allowTypeImports: true })) }] });
  return [
    { files: ['**/*.ts', '**/*.js', '**/*.mjs'], ignores: zones.flatMap((z) => z.files), rules: restrict(kafka, postgres) },
    ...zones.map((z) => ({ files: z.files, rules: { ...restrict(...z.patterns), ...(z.typesOnly ? typeImportsOnly(z.typesOnly) : {}) } })),
  ];
}

/**
 * Comments say why and cite what a reader can open: the OCPI chapters, docs/ and docs/decisions/.
 * An issue number names a tracker the reader may not have, and goes stale; history belongs in commits.
 */
function noIssueReferences() {
  const pattern = /\bissues?\s*#?\d+/i;
  return {
    meta: { type: 'suggestion', messages: { cite: 'comments cite the protocol, docs/ or a decision record (docs/decisions/), not an issue number: "{{text}}"' }, schema: [] },
    create(context) {
      return {
        Program() {
          for (const comment of context.sourceCode.getAllComments()) {
            const found = pattern.exec(comment.value);
            if (found) context.report({ loc: comment.loc, messageId: 'cite', data: { text: found[0] } });
          }
        },
      };
    },
  };
}
