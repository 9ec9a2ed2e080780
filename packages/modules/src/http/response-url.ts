import { HubError } from '@hub/ocpi';

// The response_url an eMSP gives with a command or a charging profile request (mod_commands.asciidoc
// and mod_charging_profiles.asciidoc, Request Body and Parameters): the dispatcher will POST the
// result there, so it is held to the SSRF rules of every outbound URL.

export interface ResponseUrlRules {
  /**
   * The outbound policy every URL the hub calls is held to (@hub/partners checkOutboundUrl: https, no
   * special address unless allowed): the URL parsed, or a throw saying why not.
   */
  readonly checkOutboundUrl: (raw: string) => URL;
  /** Hosts (host:port) the eMSP registered: its versions URL and endpoint URLs. */
  readonly registeredHosts: (platformId: string) => Promise<string[]>;
  /** Operator allow-list of response_url hosts beyond the ones the eMSP registered (host or host:port). */
  readonly responseUrlHosts: readonly string[];
}

/** https (http only behind the development switch), never a special address, and only a host the eMSP registered or the operator allowed. */
export async function checkResponseUrl(rules: ResponseUrlRules, platformId: string, responseUrl: string): Promise<URL> {
  let url: URL;
  try {
    url = rules.checkOutboundUrl(responseUrl);
  } catch (e) {
    throw new HubError('INVALID_PARAMETERS', { detail: `response_url: ${(e as Error).message}` });
  }
  const hosts = await rules.registeredHosts(platformId);
  const allowed = [...hosts, ...rules.responseUrlHosts.map((h) => h.toLowerCase())];
  if (!allowed.includes(url.host.toLowerCase()) && !allowed.includes(url.hostname.toLowerCase())) {
    throw new HubError('INVALID_PARAMETERS', { detail: `response_url host ${url.host} is not one this eMSP registered` });
  }
  return url;
}
