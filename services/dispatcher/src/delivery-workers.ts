import { Counter, Histogram } from '@hub/observability';
import { isSuccessCode, partnerHeaders } from '@hub/ocpi';
import { deliveryRuleOf, isDeliveredKind, type DeliveryRule } from '@hub/modules';
import { ocpiPartnerClient } from '@hub/partners';
import { aesGcmTokenCipher } from '@hub/registry';
import { cachedLookup, PartnerCallError, recipientOfDelivery, type Delivery, type DeliveryQueue, type RoutingDirectory } from '@hub/core';
import type { ServiceShell } from '@hub/service-kit';
import { DELIVERIES_CHANNEL, listen } from '@hub/store';
import type { DispatcherConfig } from './config.ts';
import { deliveryBody, type LocationOf } from './delivery-edge.ts';
import { attribute, isUnattributed, type AttributionDeps } from './delivery-attribution.ts';

// The dispatcher's delivery workers (interface document, Events; reference design, Delivery rules):
// they send due records to the eMSP's receiver with retries and backoff, a few at a time per eMSP, so
// one eMSP down or slow delays no other (no head-of-line blocking).

const CLAIM_SPACING_MS = 5;

export interface DeliveryWorkers {
  /** Claims due records soon (new records, freed slots). */
  wake(): void;
  /** Starts listening for new records and polling for retries that come due. */
  start(): Promise<void>;
  /** Claims nothing more. */
  halt(): void;
  /** Waits (10 s at most) for the deliveries in flight, then closes the listener and the client. */
  drain(): Promise<void>;
}

type WorkerDeps = { deliveries: DeliveryQueue; routing: RoutingDirectory; locationOf: LocationOf; tokensByContractId: AttributionDeps['tokensByContractId'] };

// In-flight slots and the `emsp` metric label are per receiving party: the eMSP, or the CPO of a token.
const emspKey = (d: Delivery): string => {
  const recipient = recipientOfDelivery(d);
  return `${recipient.countryCode}/${recipient.partyId}`;
};

export function deliveryWorkers(config: DispatcherConfig, shell: ServiceShell, deps: WorkerDeps): DeliveryWorkers {
  const { logger } = shell;
  const partners = ocpiPartnerClient({ policy: { allowHttp: config.allowHttpPartners, allowedHosts: config.partnerAllowedHosts }, timeoutMs: config.deliveryTimeoutMs });
  const deliver = deliveryAttempts(config, shell, deps, partners);
  const claims = claimLoop({
    concurrency: config.concurrency,
    claim: (free, inFlight) => deps.deliveries.claimDue(free, inFlight, config.concurrencyPerEmsp, config.deliveryTimeoutMs * 3),
    run: (d) =>
      deliver(d).catch((e: unknown) => {
        logger.error('delivery bookkeeping failed; the claim expires and it is retried', { err: e, id: d.id });
      }),
    onClaimFailed: (e) => logger.warn('claiming deliveries failed; retrying', { err: e }),
  });
  let listener: { close(): Promise<void> } | undefined;
  let timer: NodeJS.Timeout | undefined;
  return {
    wake: claims.wake,
    async start() {
      // New records wake the workers at once (LISTEN); a timer catches retries that come due.
      listener = await listen(config.databaseUrl, DELIVERIES_CHANNEL, claims.wake, (e) => logger.warn('delivery listener lost; polling only', { err: e }));
      timer = setInterval(claims.wake, 250);
      claims.wake();
    },
    halt() {
      claims.stop();
      clearInterval(timer);
    },
    async drain() {
      const deadline = Date.now() + 10_000;
      while (claims.inFlight() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await listener?.close();
      await partners.close();
    },
  };
}

/**
 * What becomes of an attempt, recorded in the queue and counted (hub_delivery_attempts_total): parked
 * as unroutable (kept for re-drive), failed (retried after the schedule's next wait, or a dead letter
 * after its last), or delivered.
 */
function attemptOutcomes(config: DispatcherConfig, shell: ServiceShell, deliveries: DeliveryQueue) {
  const { logger, metrics } = shell;
  const attempts = new Counter({ name: 'hub_delivery_attempts_total', help: 'Delivery attempts by kind, receiving party (label emsp: the eMSP, or the CPO of a token) and outcome (delivered, failed, dead, unroutable)', labelNames: ['kind', 'emsp', 'outcome'], registers: [metrics] });
  const latency = new Histogram({
    name: 'hub_delivery_latency_seconds',
    help: 'From the CPO push being appended to the eMSP receiver accepting it',
    labelNames: ['kind', 'emsp'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
    registers: [metrics],
  });
  return {
    /** Parked with its reason; `warning` logged when given. */
    async unroutable(d: Delivery, emsp: string, reason: string, warning?: string): Promise<void> {
      await deliveries.unroutable(d.id, reason);
      attempts.inc({ kind: d.kind, emsp, outcome: 'unroutable' });
      if (warning) logger.warn(warning, { kind: d.kind, emsp, objectId: d.objectId, reason, correlationId: d.correlationId });
    },
    /** Retried after the schedule's wait for this attempt; none left: a dead letter. */
    async failed(d: Delivery, emsp: string, error: string): Promise<number | undefined> {
      const retryIn = config.retryScheduleMs[d.attempts - 1];
      await deliveries.failed(d.id, d.offset, error, retryIn);
      attempts.inc({ kind: d.kind, emsp, outcome: retryIn === undefined ? 'dead' : 'failed' });
      return retryIn;
    },
    async delivered(d: Delivery, emsp: string): Promise<void> {
      await deliveries.delivered(d.id, d.offset);
      attempts.inc({ kind: d.kind, emsp, outcome: 'delivered' });
      latency.observe({ kind: d.kind, emsp }, (Date.now() - d.eventTime.getTime()) / 1000);
    },
  };
}

/** The receiver of a record and the Location a 2.1.1 body carries, each kept for a moment. */
function deliveryLookups(deps: WorkerDeps): { targetOf: (d: Delivery) => ReturnType<RoutingDirectory['deliveryTarget']>; locationOf: LocationOf } {
  // Targets are resolved from the registry at delivery time and kept for a moment: at hundreds of
  // deliveries a second the same few eMSPs repeat. Registry changes that stop deliveries (routing
  // disabled, receiver URL changed, token rotated) apply within 2 s. Only a usable target is kept: a
  // record found unroutable is re-checked at once after a fix.
  const targets = cachedLookup(
    2_000,
    (d: Delivery) => deps.routing.deliveryTarget(d.kind, d.emsp, d.cpo, d.targetUrl, d.recipientRole),
    (d) => `${d.kind}|${d.emsp.countryCode}/${d.emsp.partyId}|${d.cpo.countryCode}/${d.cpo.partyId}|${d.recipientRole}|${d.targetUrl ?? ''}`,
    (t) => t.ok,
  );
  // The Location a 2.1.1 session or CDR carries (delivery-edge.ts), read once per 2 s per Location: a
  // charging session's PATCHes follow each other, and where it charges does not change under it.
  // Only a found Location is kept: one not projected yet is looked for again at the retry.
  const locations = cachedLookup(
    2_000,
    ({ cpo, id }: { cpo: Delivery['cpo']; id: string }) => deps.locationOf(cpo, id),
    ({ cpo, id }) => `${cpo.countryCode}/${cpo.partyId}/${id.toUpperCase()}`,
    (found) => found !== undefined,
  );
  const locationOf: LocationOf = (cpo, id) => locations.get({ cpo, id });
  return { targetOf: (d) => targets.get(d), locationOf };
}

/** One delivery attempt of a claimed record: attributed, routed, translated, sent, recorded. */
function deliveryAttempts(config: DispatcherConfig, shell: ServiceShell, deps: WorkerDeps, partners: ReturnType<typeof ocpiPartnerClient>): (claimed: Delivery) => Promise<void> {
  const { logger } = shell;
  const cipher = aesGcmTokenCipher(config.secretKey);
  const outcomes = attemptOutcomes(config, shell, deps.deliveries);
  const { targetOf, locationOf } = deliveryLookups(deps);
  const attribution: AttributionDeps = { tokensByContractId: deps.tokensByContractId, reassign: (id, emsp, payload) => deps.deliveries.reassign(id, emsp, payload) };

  return async (claimed) => {
    let d = claimed;
    if (isUnattributed(d, config.hubParty)) {
      // A 2.1.1 session or CDR whose auth_id named no eMSP when received (delivery-attribution.ts).
      const attributed = await attribute(d, attribution);
      if (!attributed.ok) return outcomes.unroutable(d, emspKey(d), attributed.reason, 'delivery unattributed, kept for re-drive');
      d = attributed.delivery;
    }
    const emsp = emspKey(d);
    if (!isDeliveredKind(d.kind)) {
      // A kind this dispatcher has no rule for (a newer version wrote it): parked with its reason,
      // never claimed again and again; re-driven once a dispatcher that knows it runs.
      return void (await deps.deliveries.unroutable(d.id, `no delivery rule for kind ${String(d.kind)} in this dispatcher`));
    }
    const target = await targetOf(d);
    if (!target.ok) return outcomes.unroutable(d, emsp, target.reason, 'delivery unroutable, kept for re-drive');
    // Where and how each kind goes: the module table's delivery rule (@hub/modules, modules.ts).
    const rule = deliveryRuleOf(d.kind);
    const url = rule.url(target.url, d, target.version);
    // In the receiver's version (delivery-edge.ts); what it cannot carry is parked with the reason.
    const out = await deliveryBody(d.kind, target.version, d.payload, d.cpo, locationOf);
    if (!out.ok && out.retry) return void (await outcomes.failed(d, emsp, out.reason));
    if (!out.ok) return outcomes.unroutable(d, emsp, out.reason, 'delivery not representable in the receiver version, kept for re-drive');
    await sendToReceiver({ config, logger, cipher, partners, outcomes }, d, emsp, { target, rule, url, body: out.body });
  };
}

type Outcomes = ReturnType<typeof attemptOutcomes>;
type UsableTarget = Extract<Awaited<ReturnType<RoutingDirectory['deliveryTarget']>>, { ok: true }>;

/** Sends the body to the receiver and records the answer: delivered, retried later, or parked. */
async function sendToReceiver(
  ctx: { config: DispatcherConfig; logger: ServiceShell['logger']; cipher: ReturnType<typeof aesGcmTokenCipher>; partners: ReturnType<typeof ocpiPartnerClient>; outcomes: Outcomes },
  d: Delivery,
  emsp: string,
  request: { target: UsableTarget; rule: DeliveryRule; url: string; body: unknown },
): Promise<void> {
  const { config, logger, cipher, partners, outcomes } = ctx;
  const { target, rule, url } = request;
  // transport_and_format.asciidoc, Message routing headers: from the sending party to the receiver;
  // a Broadcast Push goes out from the hub itself ("Party to Party Broadcast Push" table).
  const [sender, to] = d.recipientRole === 'CPO' ? [d.emsp, d.cpo] : [d.cpo, d.emsp];
  const from = d.fromHub ? config.hubParty : sender;
  let accepted = false;
  try {
    // Hub Client Info goes without them (the module table's routingHeaders).
    const token = cipher.open(target.partnerTokenSealed);
    const headers = partnerHeaders(target.version, token, rule.routingHeaders === false ? undefined : { from, to });
    const result = await partners.call(rule.method, url, token, { correlationId: d.correlationId ?? `delivery-${d.id}` }, request.body, headers);
    // status_codes.asciidoc: 1xxx is success (1000, and 19xx for custom success codes).
    if (result.httpStatus < 200 || result.httpStatus > 299 || !isSuccessCode(result.envelope.status_code)) {
      throw new PartnerCallError('OCPI_STATUS', url, `HTTP ${result.httpStatus}, OCPI status_code ${String(result.envelope.status_code)}`);
    }
    accepted = true;
    // Recording the success can fail (Postgres away): that is not the eMSP's failure, so it must
    // not count as an attempt (on the last one it would make an accepted CDR a dead letter). The
    // claim then expires and the row is delivered again: at least once, receivers dedupe by id.
    await outcomes.delivered(d, emsp);
  } catch (e) {
    if (accepted) {
      logger.error('delivered, but recording it failed: it will be delivered again when its claim expires', { kind: d.kind, emsp, objectId: d.objectId, err: e });
      return;
    }
    const error = e instanceof Error ? e.message : String(e);
    if (e instanceof PartnerCallError && e.reason === 'URL_NOT_ALLOWED') return outcomes.unroutable(d, emsp, `receiver URL not allowed: ${error}`);
    const retryIn = await outcomes.failed(d, emsp, error);
    logger.warn(retryIn === undefined ? 'delivery failed for the last time: dead letter' : 'delivery failed, will retry', {
      kind: d.kind,
      emsp,
      objectId: d.objectId,
      attempt: d.attempts,
      retryInMs: retryIn,
      error,
      correlationId: d.correlationId,
    });
  }
}

interface ClaimLoopOptions {
  readonly concurrency: number;
  readonly claim: (free: number, inFlight: ReadonlyMap<string, number>) => Promise<Delivery[]>;
  readonly run: (d: Delivery) => Promise<void>;
  readonly onClaimFailed: (e: unknown) => void;
}

/**
 * Claims due records into free slots (at most `concurrency` in flight, and per receiving party what
 * the claim allows) and runs each. Completions come in bursts: one claim for all the slots freed
 * meanwhile. Claims start at least CLAIM_SPACING_MS apart: a claim costs Postgres a probe of every
 * recipient with due rows whatever it returns, and at hundreds of deliveries a second a claim per
 * freed slot was most of the dispatcher's Postgres work. A record waits that long at most.
 */
function claimLoop(options: ClaimLoopOptions) {
  const inFlight = new Map<string, number>();
  let total = 0;
  let lastClaimAt = 0;
  let stopping = false;
  let pumping = false;
  let again = false;
  let wakeTimer: NodeJS.Timeout | undefined;

  const start = (d: Delivery): void => {
    const emsp = emspKey(d);
    inFlight.set(emsp, (inFlight.get(emsp) ?? 0) + 1);
    total++;
    void options.run(d).finally(() => {
      inFlight.set(emsp, (inFlight.get(emsp) ?? 1) - 1);
      total--;
      wake();
    });
  };
  const pump = async (): Promise<void> => {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        const free = options.concurrency - total;
        if (free <= 0 || stopping) break;
        lastClaimAt = Date.now();
        const due = await options.claim(free, inFlight);
        for (const d of due) start(d);
        if (due.length === free) again = true;
      } while (again && !stopping);
    } catch (e) {
      options.onClaimFailed(e);
    } finally {
      pumping = false;
    }
  };
  function wake(): void {
    wakeTimer ??= setTimeout(
      () => {
        wakeTimer = undefined;
        void pump();
      },
      Math.max(1, lastClaimAt + CLAIM_SPACING_MS - Date.now()),
    );
  }
  return {
    wake,
    stop: () => {
      stopping = true;
    },
    inFlight: () => total,
  };
}
