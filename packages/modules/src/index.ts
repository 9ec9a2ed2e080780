export * from './object-events.ts';
export { supersededBy, type ApplyResult } from './newest-wins.ts';
export * from './route-spec.ts';
export * from './locations/apply.ts';
export { applyTariffEvent } from './tariffs/module.ts';
export { applyTokenEvent } from './tokens/module.ts';
export * from './tokens/token-id.ts';
export * from './cdrs/cdr-event.ts';
export * from './modules.ts';
