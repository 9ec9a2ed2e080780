import { isOcpiVersion, OCPI_VERSION, type OcpiVersion, type PartyRef } from '@hub/ocpi';
import type { DeliveryKind } from './delivery-records.ts';

// Routing (interface document, What the service does 5; Events, rule 2): which party receives what, and where. The
// port the dispatcher's delivery workers and the ingress's tokens and commands routes ask; its
// Postgres adapter (packages/store, postgres-routing-directory.ts) holds the one SQL condition of who
// may see whom, which the eMSP list pulls use as well.

/** Where and with which (sealed) token to call a receiver, or why it cannot be called. */
export type RoutingTarget =
  | {
      readonly ok: true;
      readonly url: string;
      readonly partnerTokenSealed: Buffer;
      /** The OCPI version the receiver chose: what is sent to it is translated into it (@hub/versions). */
      readonly version: OcpiVersion;
    }
  | {
      readonly ok: false;
      readonly reason: string;
      /** The one refusal that is no fault of routing: the party registered no endpoint of the module (it does not support it). */
      readonly noEndpoint?: true;
    };

/** What the hub delivers: sessions, CDRs, command results to eMSPs, tokens to CPOs, ClientInfo to both (the module table's delivery rules). */
export type DeliveredKind = DeliveryKind;

export interface RoutingDirectory {
  /**
   * The receiver endpoint of `module` at one side of an eMSP-CPO pair (the eMSP for sessions and
   * CDRs, the CPO for token authorization and commands), with the checks every forward needs: the
   * party exists and is not suspended, an active routing rule joins the pair, a URL is known (operator
   * override first), and the party registered its credentials.
   */
  receiverTarget(
    receiverRole: 'EMSP' | 'CPO',
    module: string,
    emsp: PartyRef,
    cpo: PartyRef,
    /** A URL given with the request (a command's response_url) instead of a registered endpoint. */
    fixedUrl?: string,
    /**
     * The interface of the called party's registered endpoint (version_information_endpoint.asciidoc,
     * InterfaceRole): RECEIVER unless said. A CPO's real-time authorization calls the eMSP's tokens
     * SENDER interface (mod_tokens.asciidoc, Sender interface, POST). An operator override is per
     * party and module, so it applies to either.
     */
    interfaceRole?: 'RECEIVER' | 'SENDER',
  ): Promise<RoutingTarget>;
  /**
   * Where and with which token to deliver, resolved at delivery time from the registry; the recipient
   * is the pair's eMSP unless said (a token goes to its CPO). The checks of receiverTarget, except
   * that a kind whose delivery rule has route 'rule' (ClientInfo) needs only an enabled rule: the
   * other party of the pair may be suspended (that is what the ClientInfo announces).
   */
  deliveryTarget(kind: DeliveredKind, emsp: PartyRef, cpo: PartyRef, targetUrl?: string, recipientRole?: 'EMSP' | 'CPO'): Promise<RoutingTarget>;
}

/** What the registry holds about a receiver and its route: what a routing decision is made from. */
export interface RouteFacts {
  /** The receiving party is registered in its role. */
  readonly party: boolean;
  readonly suspended: boolean;
  /** An active routing rule (or an enabled one, for a route by rule) between the pair. */
  readonly rule: boolean;
  /** A party of the pair is suspended. */
  readonly sideSuspended: boolean;
  /** The receiver's platform has registered credentials. */
  readonly registered: boolean;
  readonly sealed: Buffer | null;
  /** The operator's override of the receiver's endpoint, and the endpoint its version details list. */
  readonly overrideUrl: string | null;
  readonly endpointUrl: string | null;
  readonly version: string | null;
}

/** The call a routing decision is for: who receives, through which module and interface. */
export interface RouteRequest {
  readonly receiverRole: 'EMSP' | 'CPO';
  readonly module: string;
  readonly emsp: PartyRef;
  readonly cpo: PartyRef;
  /** A URL given with the request (a command's response_url) instead of a registered endpoint. */
  readonly fixedUrl: string | undefined;
  readonly interfaceRole: 'SENDER' | 'RECEIVER';
}

/**
 * Where a record for the receiver goes, or why it cannot go anywhere (interface document, Events,
 * rule 2: a known party, an active routing rule and a receiver URL); `facts` undefined: no such party.
 */
export function routeDecision(facts: RouteFacts | undefined, request: RouteRequest): RoutingTarget {
  const { receiverRole, module, emsp, cpo, fixedUrl, interfaceRole } = request;
  const receiver = receiverRole === 'EMSP' ? emsp : cpo;
  const who = `${receiverRole === 'EMSP' ? 'eMSP' : 'CPO'} ${receiver.countryCode}/${receiver.partyId}`;
  // Interface document, Events, rule 2: a known party, an active routing rule and a receiver URL.
  if (!facts?.party) return { ok: false, reason: `unknown ${who}` };
  if (facts.suspended) return { ok: false, reason: `${who} suspended` };
  // A suspended sender has no active route either (ACTIVE_ROUTES); say so, so the operator knows
  // the record waits for the reinstatement (then hubctl deliveries redrive), not for a rule.
  if (!facts.rule && facts.sideSuspended) return { ok: false, reason: `routing ${emsp.countryCode}/${emsp.partyId} <- ${cpo.countryCode}/${cpo.partyId} paused: a party of it is suspended` };
  if (!facts.rule) return { ok: false, reason: `no active routing rule ${emsp.countryCode}/${emsp.partyId} <- ${cpo.countryCode}/${cpo.partyId}` };
  const url = fixedUrl ?? facts.overrideUrl ?? facts.endpointUrl;
  if (!url) return { ok: false, reason: `no ${module} ${interfaceRole.toLowerCase()} URL for the ${receiverRole === 'EMSP' ? 'eMSP' : 'CPO'}`, noEndpoint: true };
  if (!facts.registered || !facts.sealed) return { ok: false, reason: `${who} has no credentials registered` };
  return { ok: true, url, partnerTokenSealed: facts.sealed, version: isOcpiVersion(facts.version) ? facts.version : OCPI_VERSION };
}

/**
 * A lookup kept for `ttlMs` per key (at hundreds of requests a second the same few pairs repeat;
 * registry changes apply within ttlMs). Only a usable answer (`keep`) is kept, so a refusal is asked
 * again at once after a fix; expired entries are swept on the way, so keys that never repeat (a
 * command's response_url) do not pile up.
 */
export interface CachedLookup<K, V> {
  get(key: K): Promise<V>;
  /** Entries held (expired ones included until the next sweep). */
  size(): number;
}

export function cachedLookup<K, V>(ttlMs: number, fetch: (key: K) => Promise<V>, keyOf: (key: K) => string, keep: (value: V) => boolean, now: () => number = Date.now): CachedLookup<K, V> {
  const entries = new Map<string, { at: number; value: Promise<V> }>();
  let sweptAt = now();
  const forget = (k: string, value: Promise<V>) => {
    if (entries.get(k)?.value === value) entries.delete(k);
  };
  const get = (key: K): Promise<V> => {
    const at = now();
    if (at - sweptAt >= ttlMs) {
      sweptAt = at;
      for (const [k, e] of entries) if (at - e.at >= ttlMs) entries.delete(k);
    }
    const k = keyOf(key);
    const hit = entries.get(k);
    if (hit && at - hit.at < ttlMs) return hit.value;
    const value = fetch(key);
    entries.set(k, { at, value });
    value.then((v) => (keep(v) ? undefined : forget(k, value))).catch(() => forget(k, value));
    return value;
  };
  return { get, size: () => entries.size };
}
