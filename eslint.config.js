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
  // in packages/store (their tests included). Everything else uses their ports.
  ...driverBoundaries(),
);

function driverBoundaries() {
  const kafka = { group: ['kafkajs', 'kafkajs/*', '@platformatic/kafka', '@platformatic/kafka/*'], message: 'the Kafka clients belong to packages/event-log: use the EventLog port (@hub/event-log subscribe, append), its TopicAdmin or readTopics.' };
  const postgres = { group: ['pg', 'pg/*', 'pg-*', '@databases/pg', '@databases/pg/*'], message: 'the Postgres driver belongs to packages/store: use its stores, or its Pool type.' };
  const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
  return [
    { files: ['**/*.ts', '**/*.js', '**/*.mjs'], ignores: ['packages/event-log/**', 'packages/store/**'], rules: restrict(kafka, postgres) },
    { files: ['packages/event-log/**'], rules: restrict(postgres) },
    { files: ['packages/store/**'], rules: restrict(kafka) },
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
