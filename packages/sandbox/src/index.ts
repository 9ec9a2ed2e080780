export * from './rules.ts';
export * from './fixtures.ts';
export * from './platform.ts';
export * from './cpo.ts';
export * from './emsp.ts';
export * from './onboarding.ts';
export * from './sandbox.ts';
