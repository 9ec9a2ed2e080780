import type { Delivery, DeliveryFilter, DeliveryInput, DeliveryPosition, DeliveryState } from './delivery-records.ts';
import type { QuarantineEntry } from './quarantine.ts';
import type { SessionFold } from './session-fold.ts';

// The delivery ports (reference design, Delivery rules): the CDRs as received (migration 004) and the
// delivery queue of sessions, CDRs, command results, tokens and ClientInfo. Where each goes is the
// RoutingDirectory's (routing.ts).

type Json = Record<string, unknown>;

/**
 * What enqueue did with Session PATCHes: applied (merged), or not and why (session-fold.ts); and how
 * many token PATCH rows were not applied (no version of the token for that CPO, or older than it holds).
 */
export type EnqueueReport = Pick<SessionFold, 'applied' | 'unapplied'> & { readonly tokenPatchesUnapplied?: number };

export type CdrReceipt = 'new' | 'retry-append' | 'duplicate' | 'conflict';

export interface CdrReceipts {
  /** Records a received CDR before its append (see migration 004). */
  receiveCdr(cdr: { countryCode: string; partyId: string; id: string; contentHash: string; document: Json }): Promise<CdrReceipt>;
  markCdrAppended(cdr: { countryCode: string; partyId: string; id: string }): Promise<void>;
  /**
   * Takes the next append of a pending CDR (a CPO's retry) if its latest append began more than
   * `settleSeconds` ago, so it has settled (docs/decisions/0003-each-cdr-once.md); undefined when it
   * has not (or the CDR is appended already). Returns when the CDR was received: its event is not
   * older, so its partition is searched from then on.
   */
  claimCdrAppend(cdr: { countryCode: string; partyId: string; id: string }, settleSeconds: number): Promise<{ receivedAt: Date } | undefined>;
  /**
   * Takes the appends of received CDRs (validated, the CPO told to retry) whose latest append began
   * more than `olderThanSeconds` ago and never completed, oldest first: the append failed or timed
   * out and the CPO has not posted them again meanwhile. Each is taken by one caller (claimCdrAppend).
   */
  unappendedCdrs(olderThanSeconds: number, limit: number): Promise<Array<{ countryCode: string; partyId: string; id: string; contentHash: string; document: Json; receivedAt: Date }>>;
  /** How many received CDRs are not on Kafka yet. */
  unappendedCdrCount(): Promise<number>;
  findCdr(cdr: { countryCode: string; partyId: string; id: string }): Promise<Json | undefined>;
}

export interface DeliveryQueue {
  /**
   * Turns consumed events into delivery rows. Newest wins: a session row is replaced only by a later
   * version (its last_updated, then a higher offset of the same key), which makes a redelivered or
   * replayed event a no-op and never lets an older session state overwrite a newer one, even one that
   * reached Kafka late. A CDR row is never replaced: a CDR appended twice is delivered once.
   */
  /**
   * `quarantine`: records of the same batch that cannot become rows (migration 013), written in the
   * same statement as the rows and the position, so a record is never both past the position and lost.
   */
  enqueue(rows: readonly DeliveryInput[], position?: DeliveryPosition, quarantine?: readonly QuarantineEntry[]): Promise<EnqueueReport>;
  /**
   * Whether the hub holds the session: a delivery row made from a PUT of it (any eMSP); the id is a
   * CiString (types.asciidoc). The ingress asks this before accepting a Session PATCH.
   */
  sessionExists(cpo: { countryCode: string; partyId: string }, sessionId: string): Promise<boolean>;
  /** The stored positions of a consumer group in a topic (next offset per partition). */
  deliveryPositions(consumerGroup: string, topic: string): Promise<Map<number, bigint>>;
  /**
   * Sets a group's positions in a topic back to the start of every partition (hubctl positions
   * reset), or to `startAt` (a partition's next offset): the dispatcher then reads from there.
   */
  resetDeliveryPositions(consumerGroup: string, topic: string, partitions: readonly number[], startAt?: ReadonlyMap<number, bigint>): Promise<void>;
  /** Operator replay: the rows are made pending again even when delivered before. */
  enqueueForced(rows: readonly DeliveryInput[]): Promise<number>;
  /**
   * Claims due rows for delivery, at most `perEmspCap` minus what is already in flight per recipient
   * ("CC/PID" -> count: the eMSP, or the CPO of a token), so one party's backlog never takes the slots
   * of the others.
   */
  claimDue(limit: number, inFlight: ReadonlyMap<string, number>, perEmspCap: number, claimMs: number): Promise<Delivery[]>;
  delivered(id: string, offset: string): Promise<void>;
  failed(id: string, offset: string, error: string, retryInMs: number | undefined): Promise<void>;
  unroutable(id: string, reason: string): Promise<void>;
  /**
   * Gives a row to another eMSP with its payload as attributed (a 2.1.1 session or CDR whose driver
   * the hub could name only later); 'taken' when that eMSP already holds a row of the same object.
   */
  reassign(id: string, emsp: { countryCode: string; partyId: string }, payload: Json): Promise<'reassigned' | 'taken'>;
  list(filter: DeliveryFilter): Promise<Delivery[]>;
  /** Makes matching dead or unroutable rows pending again; returns how many. */
  redrive(filter: DeliveryFilter): Promise<number>;
  backlog(): Promise<Array<{ emsp: string; state: DeliveryState; count: number }>>;
}

/** What the ingress's sessions and CDRs routes, the prober's CDR relay and hubctl use: both together. */
export interface DeliveryStore extends CdrReceipts, DeliveryQueue {}
