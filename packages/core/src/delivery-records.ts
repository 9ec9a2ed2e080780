import { utcTime } from './utc-time.ts';

// The delivery queue's records (reference design, Delivery rules): what goes in, what comes
// out, and the filter operators list and re-drive them by (the DeliveryQueue port, delivery-store.ts).

type Json = Record<string, unknown>;

/**
 * What the hub delivers to a party (dispatcher; interface document, Receiver endpoints), by name: each
 * module adds the kinds it delivers from its folder (`declare module '@hub/core' { interface
 * DeliveryKinds { session: true } }`), beside its delivery rule (docs/decisions/0016-a-module-is-one-folder.md).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface DeliveryKinds {}

export type DeliveryKind = keyof DeliveryKinds;
export type DeliveryState = 'pending' | 'delivered' | 'dead' | 'unroutable';

export interface DeliveryInput {
  readonly kind: DeliveryKind;
  readonly emsp: { countryCode: string; partyId: string };
  readonly cpo: { countryCode: string; partyId: string };
  readonly objectId: string;
  readonly partition: number;
  readonly offset: string;
  readonly payload: Json;
  readonly correlationId: string | undefined;
  readonly eventTime: string;
  /** command_result only: the eMSP's response_url. */
  readonly targetUrl?: string;
  /**
   * Who receives the row: the eMSP unless said (migration 018). Token rows go to their CPO; a
   * ClientInfo row to the party of either role it is for.
   */
  readonly recipientRole?: 'EMSP' | 'CPO';
  /** The hub itself sends it (a Broadcast Push): OCPI-from is the hub's party (migration 018). */
  readonly fromHub?: boolean;
  /**
   * session only: the payload is a Session PATCH, merged into the session the hub holds
   * (session-fold.ts); `emsp` is then ignored (a PATCH need not carry cdr_token).
   */
  readonly patch?: boolean;
}

export interface Delivery {
  readonly id: string;
  readonly kind: DeliveryKind;
  readonly emsp: { countryCode: string; partyId: string };
  readonly cpo: { countryCode: string; partyId: string };
  readonly objectId: string;
  readonly offset: string;
  readonly payload: Json;
  readonly correlationId: string | undefined;
  readonly eventTime: Date;
  readonly state: DeliveryState;
  readonly reason: string | undefined;
  readonly attempts: number;
  readonly nextAttemptAt: Date;
  readonly lastError: string | undefined;
  readonly createdAt: Date;
  readonly targetUrl: string | undefined;
  /** The role of the receiving party of the pair (migration 018). */
  readonly recipientRole: 'EMSP' | 'CPO';
  /** Sent with the hub's own OCPI-from (a Broadcast Push). */
  readonly fromHub: boolean;
}

export interface DeliveryFilter {
  readonly states?: readonly DeliveryState[];
  readonly emsp?: { countryCode: string; partyId: string };
  readonly cpo?: { countryCode: string; partyId: string };
  /** The receiving party (the eMSP, or the CPO of a token), whatever the direction. */
  readonly recipient?: { countryCode: string; partyId: string };
  readonly kinds?: readonly DeliveryKind[];
  readonly reason?: string;
  readonly olderThanSeconds?: number;
  readonly id?: string;
  readonly limit?: number;
}

/** Where a consumer stands after the rows it enqueues: stored in the same statement as them. */
export interface DeliveryPosition {
  readonly consumerGroup: string;
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: string;
}

/** The party that receives a delivery (its eMSP or, for tokens and some ClientInfo, its CPO). */
export const recipientOfDelivery = (d: Pick<Delivery, 'emsp' | 'cpo' | 'recipientRole'>) => (d.recipientRole === 'CPO' ? d.cpo : d.emsp);

/**
 * The version time of a delivery whose rows keep the newest version: its payload's `newestBy` field (the
 * kind's delivery rule names it, @hub/modules) as UTC (a DateTime without a zone is UTC,
 * types.asciidoc); null for a kind that keeps every event, or a value that is not an OCPI DateTime.
 */
export function sourceTime(r: DeliveryInput, newestBy: string | undefined): string | null {
  return newestBy === undefined ? null : utcTime(r.payload[newestBy], 'utc');
}

/** Whether r replaces seen (same delivery key): by their version time, then by offset. */
export function isNewer(r: DeliveryInput, seen: DeliveryInput, newestBy: string | undefined): boolean {
  const [a, b] = [sourceTime(r, newestBy), sourceTime(seen, newestBy)];
  if (a !== null && b !== null && a !== b) return a > b;
  return BigInt(r.offset) > BigInt(seen.offset);
}
