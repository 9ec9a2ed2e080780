import type { PartyRole } from '@hub/ocpi';

// Who a ClientInfo is pushed to (mod_hub_client_info.asciidoc, Push model): the hub pushes
// a party's ClientInfo to "the connected parties" it can communicate with. Here: each party of the
// other role with an ENABLED routing rule with it (not the active routes, which hide suspended
// parties: a suspension must be announced), itself not suspended, on a platform that registered its
// credentials and whose last probe was CONNECTED. Whether it lists a hubclientinfo receiver (an
// operator override or its own endpoint) is returned, so the caller can skip and count the others.

/** What a party's ClientInfo status is made from now (connectionStatus, @hub/registry). */
export interface ClientInfoSubject extends PartyRole {
  readonly suspended: boolean;
  readonly registered: boolean;
  /** The platform's last probe; undefined before the first. */
  readonly health: 'CONNECTED' | 'OFFLINE' | undefined;
}

export interface ClientInfoRecipient extends PartyRole {
  /** It lists a receiver endpoint of the module (override or version details). */
  readonly hasReceiver: boolean;
}

export interface ClientInfoRecipients {
  /** The party, or every party of a platform, with its status inputs; [] for an unknown one. */
  subjects(of: { readonly party: PartyRole } | { readonly platformId: string }): Promise<ClientInfoSubject[]>;
  /** The connected parties routed to `subject` (either direction), with whether they list a `module` receiver. */
  recipients(subject: PartyRole, module: string): Promise<ClientInfoRecipient[]>;
}
