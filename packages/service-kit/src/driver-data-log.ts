import type { ConsumedRecord, DriverDataKeys, DriverToken, EventLog } from '@hub/core';
import type { HubEvent } from '@hub/events';
import { memberAt, objectKey, parseSubject, pathSubject, personalDataOnTopic, splitTokenObjectId, tokenObjectId, type DeclaredPersonalData } from '@hub/modules';
import { openPersonalFields, openSealedEntries, sealPersonalFields, sealedKeyId } from '@hub/registry';

// The one place events meet drivers' data keys (docs/decisions/0013-erasure-by-destroying-data-keys.md):
// every service's and hubctl's event log is wrapped by this, so what is appended to a topic whose module
// declares personal data (@hub/modules personalData: tokens, sessions, CDRs, commands; a snapshot topic
// as its change topic, docs/decisions/0014-snapshot-topics.md) carries its personal fields sealed
// under the token's data key, and what any consumer (projector, dispatcher, hubctl replay and
// rebuild) reads has them opened again, or reads ERASED_PLACEHOLDER once the key is destroyed. An
// event whose subject names the driver's token (a token's) names it by its data key's id instead of
// its uid, in the Kafka key too; the plain subject travels sealed.

const SUBJECT = '@subject';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The driver's token an event is about: the token its subject names, or the Token or CdrToken at the declared path of its data. */
function driverTokenOf(rule: DeclaredPersonalData, event: HubEvent): DriverToken | undefined {
  if (rule.driverToken === 'subject') {
    const path = parseSubject(event.subject);
    if (!path) return undefined;
    const { uid, type } = splitTokenObjectId(path.id);
    return { countryCode: path.countryCode, partyId: path.partyId, uid, type };
  }
  const token = memberAt(event.data, rule.driverToken);
  if (!isObject(token)) return undefined;
  const { country_code: countryCode, party_id: partyId, uid, type } = token;
  if (typeof countryCode !== 'string' || typeof partyId !== 'string' || typeof uid !== 'string') return undefined;
  return { countryCode, partyId, uid, type: typeof type === 'string' ? type : 'RFID' };
}

async function sealEvent(keys: DriverDataKeys, rule: DeclaredPersonalData, event: HubEvent): Promise<HubEvent> {
  const token = driverTokenOf(rule, event);
  if (!token) return event;
  const bySubject = rule.driverToken === 'subject';
  if (!isObject(event.data)) {
    if (!bySubject) return event;
    // A token's tombstone (snapshot topics) carries no fields but must not name the uid either: it
    // takes the pseudonymous key and subject of the records it removes.
    const key = await keys.keyFor(token);
    const path = parseSubject(event.subject)!;
    const pseudonymous = { countryCode: path.countryCode, partyId: path.partyId, id: tokenObjectId(key.keyId, token.type) };
    return { ...event, subject: pathSubject(pseudonymous), key: objectKey(pseudonymous) };
  }
  const key = await keys.keyFor(token);
  if (!bySubject) {
    const { object, sealed } = sealPersonalFields(rule.object, event.data, key.plain, key.keyId);
    return sealed ? { ...event, data: object, sealedDriverData: sealed } : event;
  }
  const path = parseSubject(event.subject)!;
  const pseudonymous = { countryCode: path.countryCode, partyId: path.partyId, id: tokenObjectId(key.keyId, token.type) };
  const { object, sealed } = sealPersonalFields(rule.object, event.data, key.plain, key.keyId, { [SUBJECT]: event.subject });
  return { ...event, subject: pathSubject(pseudonymous), key: objectKey(pseudonymous), data: object, sealedDriverData: sealed };
}

/**
 * The event with its personal fields opened. A key that cannot be read or unwrapped (Postgres away,
 * another HUB_SECRET_KEY) throws: the partition waits and is reported stuck. A sealed header that
 * the key does not open (truncated, altered, written by something else) is the record's own fault:
 * the record is handed over as not an event, so the consumer quarantines it instead of retrying it
 * for ever.
 */
async function openEvent(keys: DriverDataKeys, rule: DeclaredPersonalData, event: HubEvent): Promise<HubEvent | undefined> {
  const sealed = event.sealedDriverData;
  const keyId = sealedKeyId(sealed);
  if (!isObject(event.data) || !sealed || !keyId) return event;
  const dataKey = await keys.keyById(keyId);
  try {
    const data = openPersonalFields(rule.object, event.data, sealed, dataKey);
    if (rule.driverToken !== 'subject' || !dataKey) return { ...event, data };
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
      const rule = personalDataOnTopic(topic);
      if (!rule) return log.append(topic, events);
      return log.append(topic, await Promise.all(events.map((e) => sealEvent(keys, rule, e))));
    },
    subscribe(options) {
      return log.subscribe({
        ...options,
        onBatch: async (batch) => {
          const logical = options.topics.find((t) => log.physical(t) === batch.topic) ?? batch.topic;
          const rule = personalDataOnTopic(logical);
          if (!rule) return options.onBatch(batch);
          const records: ConsumedRecord[] = await Promise.all(
            batch.records.map(async (r): Promise<ConsumedRecord> => {
              if (!r.event) return r;
              const event = await openEvent(keys, rule, r.event);
              return event ? { ...r, event } : { ...r, event: undefined };
            }),
          );
          return options.onBatch({ ...batch, records });
        },
      });
    },
  };
}
