// A lease among replicas of one service (the Postgres adapter: an advisory lock held on one dedicated
// connection). One replica at a time holds it; when that replica dies the lease is released, and the
// next replica that asks takes it. Used where two replicas doing the same work would be wrong or
// wasteful (the prober: one probe per partner per interval).

export interface AdvisoryLease {
  /**
   * True when this process holds the lease: takes it when free, and when already held checks that its
   * connection is still alive (a lost connection means Postgres released the lock: held no longer).
   */
  hold(): Promise<boolean>;
  /** Gives the lease up (at stop), so a standby takes over without waiting for a dead connection. */
  release(): Promise<void>;
}
