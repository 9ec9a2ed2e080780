// The last partner check per platform (docs/how-to/partner-check.md): what a check records, what is
// read back, and what a check of a platform needs from the registry. A check older than the
// platform's current registration describes credentials that no longer exist, so reads ignore it.

export interface StoredPartnerCheck {
  readonly platformId: string;
  readonly checkedAt: Date;
  readonly version: string;
  readonly ok: boolean;
  readonly failures: number;
  readonly firstFailure: string | undefined;
  readonly checkedBy: string;
  readonly report: unknown;
}

export interface PartnerCheckRecord {
  readonly checked_at: string;
  readonly version: string;
  readonly ok: boolean;
  readonly failures: number;
  readonly checks: ReadonlyArray<{ readonly check: string; readonly ok: boolean; readonly reason: string }>;
}

/** What a partner check of a platform needs from the registry: its access, its parties and the receiver overrides in force. */
export interface PartnerCheckSubject {
  readonly platformId: string;
  readonly versionsUrl: string;
  readonly partnerTokenSealed: Buffer;
  /** The version of its last credentials exchange (platforms.version). */
  readonly version: string | undefined;
  readonly parties: ReadonlyArray<{ readonly countryCode: string; readonly partyId: string; readonly role: 'CPO' | 'EMSP'; readonly suspended: boolean }>;
  /** Operator overrides by module (hubctl endpoint set), over the platform's parties. */
  readonly overrides: Readonly<Record<string, string>>;
}
