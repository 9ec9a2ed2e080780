import { cdrEventTypes, eventIdFor, newEvent, type HubEvent } from '@hub/events';
import { partyKey } from '@hub/ocpi';
import { objectKey, pathSubject, type ObjectPath } from './location-events.ts';

/**
 * The event of an accepted CDR, whoever appends it (the ingress when the CPO posts it, the prober when
 * that append never completed). Its ce_id is derived from the CDR's owner, id and content, so every
 * append of one CDR is one event to a consumer that dedupes on ce_id (README, The CDR topic).
 */
export function cdrPostedEvent(
  path: ObjectPath,
  cdr: Record<string, unknown>,
  contentHash: string,
  context: { source: string; correlationId?: string; requestId?: string },
): HubEvent {
  const token = (cdr['cdr_token'] ?? {}) as Record<string, unknown>;
  const from = partyKey(path);
  return newEvent({
    id: eventIdFor(`cdr:${from}/${path.id}:${contentHash}`),
    type: cdrEventTypes.cdrPosted,
    source: context.source,
    subject: pathSubject(path),
    key: objectKey(path),
    data: cdr,
    ...(context.correlationId ? { correlationId: context.correlationId } : {}),
    ...(context.requestId ? { requestId: context.requestId } : {}),
    from,
    // The eMSP the CDR is for (mod_cdrs.asciidoc, CdrToken: country_code and party_id of the eMSP).
    to: partyKey({ countryCode: text(token['country_code']), partyId: text(token['party_id']) }),
  });
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
