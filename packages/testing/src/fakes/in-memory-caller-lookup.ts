import type { CallerLookup, RegistryStore } from '@hub/core';

// The CallerLookup port (@hub/store, cached-caller-lookup.ts) without a cache: every request asks the
// store, so a registry change applies to the next request, as it does after the real cache's
// invalidation (caller-lookup-contract.ts holds both to that).

export function inMemoryCallerLookup(store: Pick<RegistryStore, 'findCaller'>): CallerLookup & { readonly finds: number } {
  let finds = 0;
  return {
    get finds() {
      return finds;
    },
    peek: () => undefined,
    find(tokenHash) {
      finds++;
      return store.findCaller(tokenHash);
    },
    invalidate: () => undefined,
    close: async () => undefined,
  };
}
