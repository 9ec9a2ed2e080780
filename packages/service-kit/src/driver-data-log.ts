import type { ConsumedRecord, DriverDataKeys, DriverToken, EventLog } from '@hub/core';
import { topics, type HubEvent } from '@hub/events';
import { objectKey, parseSubject, pathSubject, splitTokenObjectId, tokenObjectId } from '@hub/modules';
import { openPersonalFields, openSealedEntries, sealPersonalFields, sealedKeyId, type PersonalObjectKind } from '@hub/registry';

// The one place events meet drivers' data keys (docs/decisions/0013-erasure-by-destroying-data-keys.md):
// every service's and hubctl's event log is wrapped by this, so what is appended to the tokens,
// sessions, CDRs and commands topics carries its personal fields sealed under the token's data key, and what
// any consumer (projector, dispatcher, hubctl replay and rebuild) reads has them opened again, or
// reads ERASED_PLACEHOLDER once the key is destroyed. A token event's key and subject name the token
// by its data key's id instead of its uid, so the Kafka key holds no uid either; the plain subject
// travels sealed.

const SUBJECT = '@subject';

function kindOf(topic: string): PersonalObjectKind | undefined {
  // Snapshot records of tokens are sealed as the token events are (docs/decisions/0014-snapshot-topics.md).
  if (topic === topics.tokens || topic === topics.tokensSnapshot) return 'token';
  if (topic === topics.sessions) return 'session';
  if (topic === topics.cdrs) return 'cdr';
  if (topic === topics.commands) return 'command';
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The driver's token an event is about: the token itself, the cdr_token of a session or CDR, or a command's token. */
function driverTokenOf(kind: PersonalObjectKind, event: HubEvent): DriverToken | undefined {
  if (kind === 'token') {
    const path = parseSubject(event.subject);
    if (!path) return undefined;
    const { uid, type } = splitTokenObjectId(path.id);
    return { countryCode: path.countryCode, partyId: path.partyId, uid, type };
  }
  const request = kind === 'command' && isObject(event.data) ? event.data['request'] : undefined;
  const token = kind === 'command' ? (isObject(request) ? request['token'] : undefined) : isObject(event.data) ? event.data['cdr_token'] : undefined;
  if (!isObject(token)) return undefined;
  const { country_code: countryCode, party_id: partyId, uid, type } = token;
  if (typeof countryCode !== 'string' || typeof partyId !== 'string' || typeof uid !== 'string') return undefined;
  return { countryCode, partyId, uid, type: typeof type === 'string' ? type : 'RFID' };
}

async function sealEvent(keys: DriverDataKeys, kind: PersonalObjectKind, event: HubEvent): Promise<HubEvent> {
  const token = driverTokenOf(kind, event);
  if (!token) return event;
  if (!isObject(event.data)) {
    if (kind !== 'token') return event;
    // A token's tombstone (snapshot topics) carries no fields but must not name the uid either: it
    // takes the pseudonymous key and subject of the records it removes.
    const key = await keys.keyFor(token);
    const path = parseSubject(event.subject)!;
    const pseudonymous = { countryCode: path.countryCode, partyId: path.partyId, id: tokenObjectId(key.keyId, token.type) };
    return { ...event, subject: pathSubject(pseudonymous), key: objectKey(pseudonymous) };
  }
  const key = await keys.keyFor(token);
  if (kind !== 'token') {
    const { object, sealed } = sealPersonalFields(kind, event.data, key.plain, key.keyId);
    return sealed ? { ...event, data: object, sealedDriverData: sealed } : event;
  }
  const path = parseSubject(event.subject)!;
  const pseudonymous = { countryCode: path.countryCode, partyId: path.partyId, id: tokenObjectId(key.keyId, token.type) };
  const { object, sealed } = sealPersonalFields(kind, event.data, key.plain, key.keyId, { [SUBJECT]: event.subject });
  return { ...event, subject: pathSubject(pseudonymous), key: objectKey(pseudonymous), data: object, sealedDriverData: sealed };
}

/**
 * The event with its personal fields opened. A key that cannot be read or unwrapped (Postgres away,
 * another HUB_SECRET_KEY) throws: the partition waits and is reported stuck. A sealed header that
 * the key does not open (truncated, altered, written by something else) is the record's own fault:
 * the record is handed over as not an event, so the consumer quarantines it instead of retrying it
 * for ever.
 */
async function openEvent(keys: DriverDataKeys, kind: PersonalObjectKind, event: HubEvent): Promise<HubEvent | undefined> {
  const sealed = event.sealedDriverData;
  const keyId = sealedKeyId(sealed);
  if (!isObject(event.data) || !sealed || !keyId) return event;
  const dataKey = await keys.keyById(keyId);
  try {
    const data = openPersonalFields(kind, event.data, sealed, dataKey);
    if (kind !== 'token' || !dataKey) return { ...event, data };
    const subject = openSealedEntries(sealed, dataKey)[SUBJECT] ?? event.subject;
    const path = parseSubject(subject);
    return { ...event, subject, key: path ? objectKey(path) : event.key, data };
  } catch {
    return undefined;
  }
}

/**
 * The event log with drivers' personal data sealed on append and opened on consumption. Records
 * keep their bytes (the quarantine stores what Kafka holds); only `record.event` is opened.
 */
export function driverDataEventLog(log: EventLog, keys: DriverDataKeys): EventLog {
  return {
    ...log,
    latestOffsets: (topic) => log.latestOffsets(topic),
    offsetRanges: (topic) => log.offsetRanges(topic),
    offsetsAt: (topic, time) => log.offsetsAt(topic, time),
    findEvents: (topic, wanted) => log.findEvents(topic, wanted),
    verifyPositions: (t, p, o) => log.verifyPositions(t, p, o),
    reachable: () => log.reachable(),
    physical: (topic) => log.physical(topic),
    physicalGroup: (group) => log.physicalGroup(group),
    close: () => log.close(),
    async append(topic, events) {
      const kind = kindOf(topic);
      if (!kind) return log.append(topic, events);
      return log.append(topic, await Promise.all(events.map((e) => sealEvent(keys, kind, e))));
    },
    subscribe(options) {
      return log.subscribe({
        ...options,
        onBatch: async (batch) => {
          const logical = options.topics.find((t) => log.physical(t) === batch.topic) ?? batch.topic;
          const kind = kindOf(logical);
          if (!kind) return options.onBatch(batch);
          const records: ConsumedRecord[] = await Promise.all(
            batch.records.map(async (r): Promise<ConsumedRecord> => {
              if (!r.event) return r;
              const event = await openEvent(keys, kind, r.event);
              return event ? { ...r, event } : { ...r, event: undefined };
            }),
          );
          return options.onBatch({ ...batch, records });
        },
      });
    },
  };
}
