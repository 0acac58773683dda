/**
 * Deployments and Services of the web and worker, rendered from a migration state (the observed
 * one, or the recorded target of the pass in progress), never from spec.writeMode.
 */
import type { V1Container, V1Deployment, V1Probe, V1Service } from '@kubernetes/client-node';
import { PORTS } from '../../server/contract/ports.ts';
import { PROPAGATION_PROBE_PATH, WEB_PATHS, WORKER_PATHS } from '../../server/contract/worker-api.ts';
import type { Spec } from '../api/effective.ts';
import type { MigrationState, ObjectMeta } from '../api/v1alpha1.ts';
import { shortHash } from '../util/hash.ts';
import { containerEnv } from './env.ts';
import {
  CONFIG_HASH_ANNOTATION,
  deploymentName,
  labels,
  ownerReference,
  type Role,
  SPEC_HASH_ANNOTATION,
  selector,
  serviceName,
} from './names.ts';
import { modeSettingsFor } from './settings.ts';

/** What every child is rendered from. */
export interface RenderContext {
  meta: ObjectMeta;
  spec: Spec;
}

const httpGet = (path: string, port: number, extra: Partial<V1Probe> = {}): V1Probe => ({
  httpGet: { path, port },
  periodSeconds: 10,
  timeoutSeconds: 5,
  failureThreshold: 3,
  ...extra,
});

function probes(role: Role, state: MigrationState): Pick<V1Container, 'readinessProbe' | 'livenessProbe'> {
  if (role === 'web') {
    return {
      readinessProbe: httpGet(WEB_PATHS.ready, PORTS.web),
      livenessProbe: httpGet(WEB_PATHS.health, PORTS.web, { initialDelaySeconds: 10 }),
    };
  }
  return {
    readinessProbe: httpGet(WORKER_PATHS.ready, PORTS.worker),
    livenessProbe:
      state === 'Dual'
        ? // Liveness fails on stuck propagation while dual-writing (spec, upgrade step 6); a fresh
          // worker has not propagated yet: give it a minute before judging it stuck.
          httpGet(PROPAGATION_PROBE_PATH, PORTS.worker, { initialDelaySeconds: 60 })
        : httpGet(WORKER_PATHS.health, PORTS.worker, { initialDelaySeconds: 10 }),
  };
}

export function renderDeployment(ctx: RenderContext, role: Role, state: MigrationState): V1Deployment {
  const { meta, spec } = ctx;
  const name = deploymentName(meta.name, role);
  const settings = spec[role];
  const container: V1Container = {
    name: role,
    image: spec.image,
    imagePullPolicy: spec.imagePullPolicy,
    args: [role],
    ports: [{ name: 'http', containerPort: PORTS[role] }],
    env: containerEnv(spec, modeSettingsFor(state, spec), { port: PORTS[role] }),
    ...(settings.resources ? { resources: settings.resources as V1Container['resources'] } : {}),
    ...probes(role, state),
  };
  const podSpec = { containers: [container], terminationGracePeriodSeconds: 60 };
  const podLabels = labels(meta.name, role);
  // The config hash covers the whole pod spec and labels, so any settings change rolls the pods.
  const configHash = shortHash({ podSpec, podLabels });
  const deploymentSpec = {
    replicas: settings.replicas,
    selector: { matchLabels: selector(meta.name, role) },
    template: {
      metadata: { labels: podLabels, annotations: { [CONFIG_HASH_ANNOTATION]: configHash } },
      spec: podSpec,
    },
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: meta.namespace,
      labels: labels(meta.name, role),
      annotations: { [SPEC_HASH_ANNOTATION]: shortHash(deploymentSpec) },
      ownerReferences: [ownerReference(meta)],
    },
    spec: deploymentSpec,
  };
}

export function renderService(ctx: RenderContext, role: Role): V1Service {
  const { meta } = ctx;
  const spec = {
    selector: selector(meta.name, role),
    ports: [{ name: 'http', port: PORTS[role], targetPort: 'http' }],
  };
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: serviceName(meta.name, role),
      namespace: meta.namespace,
      labels: labels(meta.name, role),
      annotations: { [SPEC_HASH_ANNOTATION]: shortHash(spec) },
      ownerReferences: [ownerReference(meta)],
    },
    spec,
  };
}

/** Helpers the planner uses to compare desired and observed objects. */
export const configHashOf = (d: V1Deployment): string =>
  d.spec?.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION] ?? '';
export const specHashOf = (o: V1Deployment | V1Service): string =>
  o.metadata?.annotations?.[SPEC_HASH_ANNOTATION] ?? '';
