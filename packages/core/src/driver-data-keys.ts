// The key table of drivers' tokens (docs/decisions/0013-erasure-by-destroying-data-keys.md): the
// ingress gets or creates a token's data key before it seals the personal fields of an event;
// readers (projector, dispatcher, hubctl replay) find a key by the id the event names.

/** A driver's token as the key table knows it: the eMSP that issued it and its uid and type. */
export interface DriverToken {
  readonly countryCode: string;
  readonly partyId: string;
  readonly uid: string;
  readonly type: string;
}

export interface DataKey {
  readonly keyId: string;
  readonly plain: Buffer;
}

export interface DriverDataKeys {
  /** The token's data key, created on first use (idempotent across replicas: the row decides). */
  keyFor(token: DriverToken): Promise<DataKey>;
  /** The data key an event names, or undefined once erased (or never known: the table was lost). */
  keyById(keyId: string): Promise<Buffer | undefined>;
}

/** What erasing a driver's token (`hubctl erase token`) did. */
export interface ErasureResult {
  /** Whether the token had a data key (false: nothing sealed under one, or erased before). */
  readonly keyDestroyed: boolean;
  readonly tokenRows: number;
  readonly deliveryRows: number;
  readonly cdrRows: number;
}
