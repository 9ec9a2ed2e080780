import { Admin } from '@platformatic/kafka';
import type { EventLogOptions } from './kafka-config.ts';
import { platformaticConnection } from './platformatic-connection.ts';

// The start-up access check (kafka-access.ts): one connection attempt with no retries, through the
// client the services use, so a TLS or SASL setting it reads differently is found at start too.

/** One metadata request without retries: undefined when the cluster answered, else the client's error. */
export async function platformaticAccessAttempt(options: EventLogOptions): Promise<unknown> {
  const admin = new Admin({ ...platformaticConnection(options), clientId: options.clientId ?? 'ocpi-hub', retries: 0, connectTimeout: 10_000 });
  try {
    await admin.listTopics();
    return undefined;
  } catch (e) {
    return e;
  } finally {
    await admin.close().catch(() => undefined);
  }
}
