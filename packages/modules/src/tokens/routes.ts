import type { Request, Response } from 'express';
import { tokenEventTypes, topics } from '@hub/events';
import { HubError, partyKey, sameParty, type PartyRef } from '@hub/ocpi';
import { DEFAULT_TOKEN_TYPE, tokenObjectId } from '../index.ts';
import type { ObjectPath, RoutingDirectory } from '@hub/core';
import type { Token, TokenType } from '@hub/schemas/generated/ocpi/token';
import type { VersionEdge } from '../http/version-edge.ts';
import { handle, namedReceiver, okEmpty } from '../http/answers.ts';
import { notServed } from '../http/method-not-allowed.ts';
import { appendObjectEvent, objectPath, requireExisting, requireOwnParty, requireSameIds, type OcpiPatch } from '../http/ocpi-objects.ts';
import { listObjects, objectDetail, type ObjectRoutesDeps } from '../http/object-reads.ts';
import { objectRoutesDeps, type ModuleRoutes } from '../http/mounts.ts';
import { authorizeHandlers } from './authorize-routes.ts';

// Tokens as objects (mod_tokens.asciidoc): the eMSP pushes its tokens to the hub as to a
// CPO's Receiver interface (PUT, PATCH {tokens}/{country_code}/{party_id}/{token_uid}[?type=]), each an
// event on ocpi.tokens.v1 the dispatcher delivers to the routed CPOs; CPOs pull them from the hub as
// from an eMSP's Sender interface (GET {tokens}, paginated). Real-time authorization is in authorize-routes.ts.

export interface TokenObjectsDeps extends ObjectRoutesDeps {
  /** Whether a CPO named in the OCPI-to headers can receive the eMSP's tokens. */
  readonly targets: Pick<RoutingDirectory, 'receiverTarget'>;
  /** The hub's own party: OCPI-to naming it is a Broadcast Push. */
  readonly hub: PartyRef;
}

/** mod_tokens.asciidoc, TokenType enum (a Record, so a type the schema adds is a compile error here). */
const TOKEN_TYPES: Readonly<Record<TokenType, true>> = { AD_HOC_USER: true, APP_USER: true, OTHER: true, RFID: true };

/** Token uids are CiStrings (mod_tokens.asciidoc, Token object), as are country_code and party_id. */
const CI_STRING_IDS = ['country_code', 'party_id', 'uid'];

interface TokenAt {
  /** The token's path in the hub: its id is "uid|TYPE" (@hub/modules tokens/token-id.ts; a uid is unique per type only). */
  readonly path: ObjectPath;
  readonly uid: string;
  readonly type: TokenType;
}

/**
 * The token a request names: country_code, party_id and token_uid from the path, the type from
 * ?type=, RFID when omitted (mod_tokens.asciidoc, Receiver interface, PUT and GET request parameters).
 */
function tokenAt(req: Request): TokenAt {
  const { countryCode, partyId, id: uid } = objectPath(req, 'token_uid');
  const given = req.query['type'];
  if (given !== undefined && (typeof given !== 'string' || !Object.hasOwn(TOKEN_TYPES, given))) {
    throw new HubError('INVALID_PARAMETERS', { detail: `type must be one of ${Object.keys(TOKEN_TYPES).join(', ')}` });
  }
  const type = (given ?? DEFAULT_TOKEN_TYPE) as TokenType;
  return { path: { countryCode, partyId, id: tokenObjectId(uid, type) }, uid, type };
}

/**
 * The CPO the push is for (its ocpi-to), or undefined for every CPO routed to the eMSP
 * (transport_and_format.asciidoc, Message Routing): OCPI-to headers naming a CPO send it to that CPO
 * only, which must be able to receive it (an active routing rule with the eMSP, a tokens receiver:
 * 4001 otherwise, before anything is accepted); naming the hub is a Broadcast Push, kept as an
 * ocpi-to of the hub so the dispatcher sends it with the hub's OCPI-from ("Party to Party Broadcast
 * Push" table); none is an open routing request, which goes to the same CPOs from the eMSP.
 */
async function recipientOf(deps: TokenObjectsDeps, req: Request, emsp: PartyRef): Promise<string | undefined> {
  const to = namedReceiver(req);
  if (!to) return undefined;
  if (sameParty(to, deps.hub)) return partyKey(deps.hub);
  const target = await deps.targets.receiverTarget('CPO', 'tokens', emsp, to);
  if (!target.ok) throw new HubError('UNKNOWN_RECEIVER', { detail: target.reason });
  return partyKey(to);
}

/** The 2.1.1 token types (mod_tokens.md 4.3 TokenType), the first the one a token without a type is taken for. */
const TOKEN_TYPES_211: readonly TokenType[] = ['RFID', 'OTHER'];

/**
 * The token a 2.1.1 request names. 2.1.1 has no type parameter: a token is {token_uid} alone
 * (mod_tokens.md 2.1 CPO Interface, GET, PUT and PATCH request parameters), its type (RFID or OTHER,
 * 4.3) in the body. A PUT is the body's type; a PATCH without one and a GET are the token the eMSP
 * holds under that uid (RFID first; waited for when the projection is behind), so a token pushed as
 * OTHER can be patched and read back. A ?type= a 2.1.1 client sends anyway is taken as given.
 */
async function tokenAt211(req: Request, deps: ObjectRoutesDeps, method: 'put' | 'patch' | 'get', named: TokenAt): Promise<TokenAt> {
  if (req.query['type'] !== undefined) return named;
  const bodyType = method === 'get' ? undefined : (req.body as { type?: unknown } | undefined)?.type;
  const at = (type: TokenType): TokenAt => ({ ...named, path: { ...named.path, id: tokenObjectId(named.uid, type) }, type });
  if (typeof bodyType === 'string' && (TOKEN_TYPES_211 as readonly string[]).includes(bodyType)) return at(bodyType as TokenType);
  if (method === 'put') return named;
  const held = async () => {
    for (const type of TOKEN_TYPES_211) if (await deps.readModels.exists('tokens', at(type).path)) return at(type);
    return undefined;
  };
  const found = await held();
  if (found) return found;
  await deps.wait.caughtUp('tokens');
  return (await held()) ?? named;
}

/** The token a request names, in the caller's version. */
const tokenIn = async (req: Request, deps: ObjectRoutesDeps, edge: VersionEdge, method: 'put' | 'patch' | 'get', named = tokenAt(req)): Promise<TokenAt> =>
  edge.version === '2.1.1' ? tokenAt211(req, deps, method, named) : named;

function push(deps: TokenObjectsDeps, method: 'put' | 'patch', edge: VersionEdge) {
  return handle(async (req: Request, res: Response) => {
    // Its owner before any lookup of its type (tokenAt211): the path's country_code and party_id.
    const named = tokenAt(req);
    requireOwnParty(req, named.path, 'EMSP');
    const { path, uid, type } = await tokenIn(req, deps, edge, method, named);
    // In the caller's version, translated to the canonical Token (its owner from the path: a 2.1.1
    // Token names none, mod_tokens.md 3.1).
    const body = edge.objectIn('token', req.body, method === 'patch', path) as OcpiPatch<Token>;
    // mod_tokens.asciidoc, PUT request parameters: the path's ids "SHALL be the same" as the token's.
    requireSameIds(body, { country_code: path.countryCode, party_id: path.partyId, uid, type }, CI_STRING_IDS);
    const to = await recipientOf(deps, req, { countryCode: path.countryCode, partyId: path.partyId });
    if (method === 'patch') await requireExisting(deps.readModels, deps.wait, 'tokens', path, 'token');
    await appendObjectEvent(deps.eventLog, req, topics.tokens, method === 'put' ? tokenEventTypes.tokenPut : tokenEventTypes.tokenPatched, path, body, to);
    okEmpty(res);
  });
}

const TOKEN = 'tokens/{country_code}/{party_id}/{token_uid}';

export const tokensRoutes: ModuleRoutes = (moduleDeps, _version, edge) => {
  const objects = objectRoutesDeps(moduleDeps);
  const deps: TokenObjectsDeps = { ...objects, targets: moduleDeps.routing, hub: moduleDeps.credentials.hub };
  const authorizeDeps = { ...moduleDeps.tokens, validator: moduleDeps.validator, targets: moduleDeps.routing, readModels: moduleDeps.objects.readModels, rateLimiter: moduleDeps.objects.rateLimiter };
  return {
    'GET tokens': listObjects(deps, 'tokens', (documents) => edge.listOut('token', documents)),
    [`GET ${TOKEN}`]: objectDetail(deps, 'tokens', async (req) => (await tokenIn(req, deps, edge, 'get')).path, (document) => edge.objectOut('token', document)),
    [`PUT ${TOKEN}`]: push(deps, 'put', edge),
    [`PATCH ${TOKEN}`]: push(deps, 'patch', edge),
    // mod_tokens.asciidoc, Receiver interface: no DELETE; a token is invalidated by PUT or PATCH of valid.
    [`DELETE ${TOKEN}`]: notServed('tokens are not deleted: PUT or PATCH the token with valid false'),
    ...authorizeHandlers(authorizeDeps, edge),
  };
};
