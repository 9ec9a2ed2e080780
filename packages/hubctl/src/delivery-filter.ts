import type { DeliveryFilter, DeliveryState } from '@hub/core';
import type { PartyRef } from '@hub/ocpi';
import { deliveredKinds, isDeliveredKind } from '@hub/modules';
import { UsageError } from './usage.ts';

/** A party given as CC/PID (or CC-PID) on the command line. */
export function partyRef(text: string, flag: string): PartyRef {
  const m = /^([A-Za-z]{2})[/-]([A-Za-z0-9]{3})$/.exec(text);
  if (!m?.[1] || !m[2]) throw new UsageError(`--${flag} must look like CC/PID, e.g. NL/ABC`);
  return { countryCode: m[1].toUpperCase(), partyId: m[2].toUpperCase() };
}

const DURATION = /^(\d+)(s|m|h|d)$/;

/** The delivery filter of `deliveries list|redrive` options. */
export function deliveryFilter(values: Record<string, string | boolean | undefined>): DeliveryFilter {
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name]) : undefined);
  const filter: { -readonly [K in keyof DeliveryFilter]: DeliveryFilter[K] } = {};
  const state = text('state');
  if (state) {
    const states = state.split(',') as DeliveryState[];
    if (!states.every((s) => ['pending', 'delivered', 'dead', 'unroutable'].includes(s))) throw new UsageError('--state must be pending, delivered, dead or unroutable');
    filter.states = states;
  }
  const emsp = text('emsp');
  if (emsp) filter.emsp = partyRef(emsp, 'emsp');
  const cpo = text('cpo');
  if (cpo) filter.cpo = partyRef(cpo, 'cpo');
  // Who receives the records (the eMSP of a session, the CPO of a token; migration 018), whatever the
  // direction: --emsp and --cpo name the pair a record is about.
  const recipient = text('recipient');
  if (recipient) filter.recipient = partyRef(recipient, 'recipient');
  const kind = text('kind');
  if (kind) {
    const kinds = kind.split(',');
    if (!kinds.every(isDeliveredKind)) throw new UsageError(`--kind must be one or more of ${deliveredKinds.join(', ')}`);
    filter.kinds = kinds;
  }
  const reason = text('reason');
  if (reason) filter.reason = reason;
  const id = text('id');
  if (id) {
    if (!/^\d+$/.test(id)) throw new UsageError('--id must be a record number');
    filter.id = id;
  }
  const older = text('older-than');
  if (older) {
    const m = DURATION.exec(older);
    if (!m?.[1] || !m[2]) throw new UsageError('--older-than must look like 30s, 15m, 2h or 1d');
    filter.olderThanSeconds = Number(m[1]) * ({ s: 1, m: 60, h: 3600, d: 86400 } as Record<string, number>)[m[2]]!;
  }
  const limit = text('limit');
  if (limit) filter.limit = Number(limit);
  return filter;
}
