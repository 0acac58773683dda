/** The pure heart of the operator: API, validation, rendering and the planner. */
export * from './api/crd.ts';
export * from './api/effective.ts';
export * from './api/v1alpha1.ts';
export { type ObservationsNeeded, observationsNeeded } from './planner/observations.ts';
export { plan } from './planner/plan.ts';
export type * from './planner/types.ts';
export * from './render/jobs.ts';
export * from './render/names.ts';
export * from './render/workloads.ts';
