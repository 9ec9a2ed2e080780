import type { OcpiCallResult, OcpiPartnerClient } from '@hub/partners';
import { PartnerCallError } from '@hub/core';

// The OcpiPartnerClient port (@hub/partners) without a network: each call is answered by `answer`
// (by default a network failure, as from a partner that is not there) and recorded, so a test states
// what the partner says and checks what the hub sent it.

export interface PartnerCall {
  readonly method: string;
  readonly url: string;
  readonly token: string;
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string>>;
}

export type PartnerAnswer = (call: PartnerCall) => OcpiCallResult | Promise<OcpiCallResult>;

export interface ScriptedPartnerClient extends OcpiPartnerClient {
  readonly calls: readonly PartnerCall[];
  /** What the partner answers from now on. */
  answerWith(answer: PartnerAnswer): void;
}

export function scriptedPartnerClient(initial?: PartnerAnswer): ScriptedPartnerClient {
  let answer = initial;
  const calls: PartnerCall[] = [];
  const unreachable = (url: string) => new PartnerCallError('NETWORK', url, 'no partner in this test');
  return {
    calls,
    answerWith(next) {
      answer = next;
    },
    async call(method, url, token, _ids, body, extraHeaders = {}) {
      const call = { method, url, token, body, headers: extraHeaders };
      calls.push(call);
      if (!answer) throw unreachable(url);
      return answer(call);
    },
    async fetchVersions(versionsUrl) {
      throw unreachable(versionsUrl);
    },
    async fetchVersionDetails(detailsUrl) {
      throw unreachable(detailsUrl);
    },
    close: async () => undefined,
  };
}
