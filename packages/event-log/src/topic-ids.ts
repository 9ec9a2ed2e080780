import type { EventLogOptions, LogSink } from './kafka-config.ts';
import { platformaticConnection } from './platformatic-connection.ts';

// Kafka's topic ids (KIP-516, Metadata v10 and later): a topic deleted and created again under the
// same name gets a new one, whatever its offsets, so a position binding that holds the id tells a
// recreated topic apart (position-check.ts). One Metadata call through the client's admin, over a
// connection of its own.

/**
 * The topic id of each physical topic the brokers name one for. Never throws: without ids (a broker
 * before 2.8, a topic not there yet, the call failing) the other identity checks still apply, so a
 * failure is logged and answered with the ids it has (none).
 */
export function topicIdReader(options: Pick<EventLogOptions, 'brokers' | 'clientId' | 'ssl' | 'sasl'>, logger: LogSink) {
  return async (physicalTopics: readonly string[]): Promise<ReadonlyMap<string, string>> => {
    if (physicalTopics.length === 0) return new Map();
    // Loaded here, not at the top: importing @platformatic/kafka costs about 1 s of CPU (it builds its
    // validators), which every hubctl call and service start would pay for a call few of them make.
    const { Admin } = await import('@platformatic/kafka');
    // Bounded: a consumer's start waits for it, and the offset checks do not need it.
    const admin = new Admin({ ...platformaticConnection(options), retries: 1, retryDelay: 200, timeout: 5_000 });
    try {
      const metadata = await admin.metadata({ topics: [...physicalTopics], forceUpdate: true });
      const zero = /^[0-]+$/;
      return new Map([...metadata.topics].filter(([, t]) => typeof t.id === 'string' && !zero.test(t.id)).map(([name, t]) => [name, t.id]));
    } catch (err) {
      logger.warn('Kafka topic ids not read; positions are checked without them', { err, topics: physicalTopics });
      return new Map();
    } finally {
      await admin.close().catch(() => undefined);
    }
  };
}
