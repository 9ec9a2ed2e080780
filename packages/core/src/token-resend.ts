import type { PartyRef, PartyRole } from '@hub/ocpi';

// A CPO that gets a route to an eMSP later (a new routing rule, a reinstatement) receives the eMSP's
// current tokens: the tokens read model's active generation, per active route. The dispatcher's
// registry consumer makes them token delivery rows (token-fold.ts rules: the newest version per CPO
// wins, so a CPO that holds a token's version keeps its row).

type Json = Record<string, unknown>;

export interface TokenResendSource {
  /** The active routes of one pair, or of every pair a party is in (as its role). */
  activePairs(of: { readonly emsp: PartyRef; readonly cpo: PartyRef } | { readonly party: PartyRole }): Promise<Array<{ emsp: PartyRef; cpo: PartyRef }>>;
  /** A page of an eMSP's current tokens, by id ("UID|TYPE"), after `after`. */
  tokens(emsp: PartyRef, after: string | undefined, limit: number): Promise<Array<{ id: string; document: Json }>>;
}
