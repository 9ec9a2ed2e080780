import type { Request, RequestHandler, Response } from 'express';
import { HubError, partyKey, sameParty, type PartyRole } from '@hub/ocpi';
import { ocpiModules, projectionOf } from '../index.ts';
import type { ListNarrowing, ObjectPath, RateLimiter, ReadModel } from '@hub/core';
import type { SchemaValidator } from '@hub/schemas';
import { handle, namedSender, ok, okPreserializedList } from './answers.ts';
import type { ProjectionWait } from './ocpi-objects.ts';
import { parsePage, setPageHeaders } from './pagination.ts';
import type { EventAppender, ReadModelReads } from './ports.ts';

// The pulls of a projected module (locations, tariffs, tokens), read from the module table: a routed,
// paginated list for the role that reads the owner's objects, and a detail GET for the owner and the
// routed readers (interface document, What the service does 5, Pagination, Limits; transport_and_format.asciidoc,
// Pagination).

export interface ObjectRoutesDeps {
  readonly eventLog: EventAppender;
  readonly readModels: ReadModelReads;
  readonly wait: ProjectionWait;
  readonly validator: SchemaValidator;
  readonly rateLimiter: RateLimiter;
  readonly publicBaseUrl: string;
  /**
   * Page sizes, and the list requests a party may make per minute, by the module table's listBudget
   * (interface document, Limits: location lists 200 a minute per party).
   */
  readonly limits: { defaultLimit: number; maxLimit: number; listsPerMinute: Readonly<Record<string, number>> };
}

/** The role that reads a module's objects: the other side of the owner's routing rules. */
const readerOf = (model: ReadModel): PartyRole['role'] => (ocpiModules[model].owner === 'CPO' ? 'EMSP' : 'CPO');

/**
 * Whose budget a list request counts against: the caller's active party of the reading role (eMSP for
 * locations, CPO for tokens) its OCPI-from headers name, else its first such party, so each party of
 * a platform has its own budget when it names itself (naming a party of another role or a suspended
 * one buys no extra budget). A caller without an active party of that role counts against its platform.
 */
export function listingParty(req: Request, role: PartyRole['role'] = 'EMSP'): string {
  const sender = namedSender(req);
  const readers = req.caller.parties.filter((p) => p.role === role && !p.suspended).sort((a, b) => partyKey(a).localeCompare(partyKey(b)));
  const party = (sender ? readers.find((p) => sameParty(p, sender)) : undefined) ?? readers[0];
  return party ? partyKey(party) : req.caller.platformId;
}

/** The paginated list of a read model, of the owners the caller's parties have an active routing rule with. */
export function listObjects(
  deps: ObjectRoutesDeps,
  model: ReadModel,
  out: (documentsJson: readonly string[]) => readonly string[] = (d) => d,
  /** A narrower list, decided by the caller's version (ListNarrowing: tariffs a 2.2.1 or 2.1.1 reader may be given). */
  narrow: ListNarrowing = {},
): RequestHandler {
  const { listBudget } = projectionOf(model);
  return handle(async (req: Request, res: Response) => {
    if (listBudget !== undefined) {
      const perMinute = deps.limits.listsPerMinute[listBudget];
      // A budget the module table names but the wiring (start.ts) did not configure: a bug, not a pass.
      if (perMinute === undefined) throw new Error(`no rate limit configured for ${listBudget}`);
      const decision = await deps.rateLimiter.hit(listBudget, listingParty(req, readerOf(model)), perMinute);
      if (!decision.allowed) {
        throw new HubError('RATE_LIMITED', {
          detail: `at most ${perMinute} ${model.replace(/s$/, '')} list requests per minute`,
          headers: { 'Retry-After': String(decision.retryAfterSeconds) },
        });
      }
    }
    const page = parsePage(req, deps.limits);
    const result = await deps.readModels.listVisible(model, req.caller.platformId, { ...page, ...narrow });
    // The next page starts after every document read, also one the caller's version cannot carry.
    setPageHeaders(res, page, result.total, result.documentsJson.length, { publicUrl: `${deps.publicBaseUrl}${req.originalUrl}` });
    okPreserializedList(res, out(result.documentsJson));
  });
}

/**
 * Detail GET: visible to the owner and to the routed readers. The owner reads its own writes: before
 * answering it, the read model catches up with everything appended so far (bounded).
 */
export function objectDetail(
  deps: ObjectRoutesDeps,
  model: ReadModel,
  pathOf: (req: Request) => ObjectPath | Promise<ObjectPath>,
  out: (document: Record<string, unknown>, path: ObjectPath) => unknown = (d) => d,
): RequestHandler {
  const { owner } = ocpiModules[model];
  return handle(async (req: Request, res: Response) => {
    const path = await pathOf(req);
    const isOwner = req.caller.parties.some((p) => p.role === owner && sameParty(p, path));
    if (isOwner) await deps.wait.caughtUp(model);
    const found = await deps.readModels.findVisible(model, req.caller.platformId, path);
    const shown = found && out(found, path);
    if (!shown) throw new HubError(ocpiModules[model].notFound.pull);
    ok(res, shown);
  });
}
