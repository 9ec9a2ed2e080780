import type { ModuleId } from '../modules.ts';
import type { ModuleRoutes } from './mounts.ts';
import { locationsRoutes } from '../locations/routes.ts';
import { tariffsRoutes } from '../tariffs/routes.ts';
import { sessionsRoutes } from '../sessions/routes.ts';
import { cdrsRoutes } from '../cdrs/routes.ts';
import { tokensRoutes } from '../tokens/routes.ts';
import { commandsRoutes } from '../commands/routes.ts';
import { chargingProfilesRoutes } from '../chargingprofiles/routes.ts';
import { hubClientInfoRoutes } from '../hubclientinfo/routes.ts';

// The route handlers of each module's folder, by module (http/mounts.ts mounts them by the routes its
// module.ts declares): the module table's HTTP half, kept apart from
// modules.ts so that only the ingress loads express and the handlers (the projector, dispatcher and
// prober import the table alone). Typed by ModuleId: a module in the table without routes does not
// compile, nor routes for a module the table does not hold.
export const moduleRoutes = {
  hubclientinfo: hubClientInfoRoutes,
  locations: locationsRoutes,
  tariffs: tariffsRoutes,
  sessions: sessionsRoutes,
  cdrs: cdrsRoutes,
  tokens: tokensRoutes,
  commands: commandsRoutes,
  chargingprofiles: chargingProfilesRoutes,
} as const satisfies Readonly<Record<ModuleId, ModuleRoutes>>;
