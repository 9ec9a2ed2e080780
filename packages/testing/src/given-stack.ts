import { after, before } from 'node:test';
import { createTestStack, type TestStack } from './stack.ts';

/**
 * A test stack (its own database and topic prefix) for the enclosing describe: created before its
 * tests, cleaned up after them. Read `.stack` inside hooks and tests.
 */
export function givenTestStack(label: string): { readonly stack: TestStack } {
  let stack: TestStack | undefined;
  before(async () => {
    stack = await createTestStack(label);
  });
  after(async () => {
    await stack?.cleanup();
  });
  return {
    get stack(): TestStack {
      if (!stack) throw new Error(`the test stack ${label} is not up yet (read it inside a test or hook)`);
      return stack;
    },
  };
}
