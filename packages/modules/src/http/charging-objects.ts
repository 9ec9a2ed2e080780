import { HubError, partyKey } from '@hub/ocpi';
import type { SchemaValidator } from '@hub/schemas';
import type { CdrToken } from '@hub/schemas/generated/ocpi/cdr_token';
import type { DispatcherWait } from './known-sessions.ts';
import type { EventAppender, IngressDeliveries, ReadModelReads } from './ports.ts';
import type { ModuleRouteDeps } from './mounts.ts';

// What the session and CDR routes share (interface document, Sessions, CDRs; OCPI 2.2.1
// mod_sessions.asciidoc, mod_cdrs.asciidoc): their deps, and the cdr_token that names the eMSP.

export interface SessionCdrDeps {
  readonly eventLog: EventAppender;
  /** The tokens a 2.1.1 CPO's auth_id may name (version-edge.ts). */
  readonly readModels: Pick<ReadModelReads, 'tokensByContractId'>;
  readonly deliveries: Pick<IngressDeliveries, 'receiveCdr' | 'markCdrAppended' | 'claimCdrAppend' | 'findCdr' | 'sessionExists'>;
  readonly validator: SchemaValidator;
  readonly publicBaseUrl: string;
  /** Waits for the dispatcher before a PATCH of a session not (yet) held is refused. */
  readonly dispatcherWait: DispatcherWait;
}

/** The deps of the session and CDR routes, from the ingress's. */
export function sessionCdrDeps(deps: ModuleRouteDeps): SessionCdrDeps {
  return { eventLog: deps.objects.eventLog, readModels: deps.objects.readModels, deliveries: deps.deliveries, validator: deps.validator, publicBaseUrl: deps.publicBaseUrl, dispatcherWait: deps.dispatcherWait };
}

/**
 * cdr_token must name the eMSP (interface document, CDR token: "must identify the eMSP; used for
 * routing"): refused at once with 2001 so the CPO learns about it, rather than undeliverable later.
 */
export function requireEmspToken(token: CdrToken | null | undefined): asserts token is CdrToken {
  const cc: unknown = token?.country_code;
  const pid: unknown = token?.party_id;
  if (typeof cc !== 'string' || typeof pid !== 'string' || !/^[A-Za-z]{2}$/.test(cc) || !/^[A-Za-z0-9]{3}$/.test(pid)) {
    throw new HubError('INVALID_PARAMETERS', { detail: 'cdr_token must carry the country_code and party_id of the eMSP' });
  }
}

/** The eMSP a cdr_token names, as the event's recipient (cc/pid). */
export function eMspOf(token: CdrToken): string {
  return partyKey({ countryCode: token.country_code, partyId: token.party_id });
}
