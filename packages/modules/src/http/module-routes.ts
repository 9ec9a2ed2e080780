import type { ModuleId } from '../modules.ts';
import type { ModuleMounts } from './mounts.ts';
import { locationsMounts } from '../locations/routes.ts';
import { tariffsMounts } from '../tariffs/routes.ts';
import { sessionsMounts } from '../sessions/routes.ts';
import { cdrsMounts } from '../cdrs/routes.ts';
import { tokensMounts } from '../tokens/routes.ts';
import { commandsMounts } from '../commands/routes.ts';
import { chargingProfilesMounts } from '../chargingprofiles/routes.ts';
import { hubClientInfoMounts } from '../hubclientinfo/routes.ts';

// The route handlers of each module's folder, by module: the module table's HTTP half, kept apart from
// modules.ts so that only the ingress loads express and the handlers (the projector, dispatcher and
// prober import the table alone). Typed by ModuleId: a module in the table without routes does not
// compile, nor routes for a module the table does not hold.
export const moduleRoutes = {
  hubclientinfo: hubClientInfoMounts,
  locations: locationsMounts,
  tariffs: tariffsMounts,
  sessions: sessionsMounts,
  cdrs: cdrsMounts,
  tokens: tokensMounts,
  commands: commandsMounts,
  chargingprofiles: chargingProfilesMounts,
} as const satisfies Readonly<Record<ModuleId, ModuleMounts>>;
