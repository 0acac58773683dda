/**
 * Deployments and Services of the web and worker, rendered from a migration state (the observed
 * one, or the recorded target of the pass in progress), never from spec.writeMode.
 */
import type {
  KubernetesObject,
  V1Container,
  V1Deployment,
  V1Probe,
  V1Service,
} from '@kubernetes/client-node';
import { OTLP_GRPC_PORT, PORTS, WEB_METRICS_PORT } from '../../server/contract/ports.ts';
import { PROPAGATION_PROBE_PATH, WEB_PATHS, WORKER_PATHS } from '../../server/contract/worker-api.ts';
import type { Spec } from '../api/effective.ts';
import type { MigrationState, ObjectMeta, RecordedSettings } from '../api/v1alpha1.ts';
import { shortHash } from '../util/hash.ts';
import { containerEnv } from './env.ts';
import {
  CONFIG_HASH_ANNOTATION,
  deploymentName,
  INPUTS_HASH_ANNOTATION,
  labels,
  ownerReference,
  type Role,
  SPEC_HASH_ANNOTATION,
  selector,
  serviceName,
} from './names.ts';
import { applyTemplate } from './pod.ts';
import { modeSettingsFor } from './settings.ts';
import { type SourceDigests, sourcesHash, sourcesRead } from './sources.ts';

/** What every child is rendered from. */
export interface RenderContext {
  meta: ObjectMeta;
  spec: Spec;
  /** Digests of the watched Secrets and ConfigMaps (absent: none watched). */
  sources?: SourceDigests;
  /** The settings recorded for the observed and the target state (settings.ts, approvedSettings). */
  recorded?: readonly RecordedSettings[];
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
    // The web's metrics have a port of their own that its Service leaves out; OTLP over gRPC
    // (the Collector's and the SDKs' default port) is served beside the API.
    ports:
      role === 'web'
        ? [
            { name: 'http', containerPort: PORTS.web },
            { name: 'otlp-grpc', containerPort: OTLP_GRPC_PORT },
            { name: 'metrics', containerPort: WEB_METRICS_PORT },
          ]
        : [{ name: 'http', containerPort: PORTS.worker }],
    env: containerEnv(spec, modeSettingsFor(state, spec, {}, ctx.recorded), {
      port: PORTS[role],
      role,
      owner: { namespace: meta.namespace, name: meta.name },
    }),
    ...(settings.resources ? { resources: settings.resources as V1Container['resources'] } : {}),
    ...probes(role, state),
  };
  const inputsHash = sourcesHash(sourcesRead(spec, role), ctx.sources);
  const pod = applyTemplate(
    settings.template,
    container,
    {
      labels: labels(meta.name, role),
      annotations: { [INPUTS_HASH_ANNOTATION]: inputsHash },
      selector: selector(meta.name, role),
    },
    { terminationGracePeriodSeconds: 60 },
  );
  // The config hash covers the whole pod (spec, labels, annotations with the inputs hash), so any
  // settings change and any change of a Secret key the role reads rolls the pods.
  const configHash = shortHash(pod);
  const deploymentSpec = {
    replicas: settings.replicas,
    selector: { matchLabels: selector(meta.name, role) },
    // Surge, never take a ready Pod away first: a rollout then keeps every replica a
    // PodDisruptionBudget counts, and "rolled out" (all replicas updated and available) stays exact.
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
    template: {
      metadata: {
        labels: pod.labels,
        annotations: { ...pod.annotations, [CONFIG_HASH_ANNOTATION]: configHash },
      },
      spec: pod.spec,
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
  const http = { name: 'http', port: PORTS[role], targetPort: 'http' };
  // appProtocol lets meshes and gateways route the gRPC port as HTTP/2.
  const grpc = { name: 'otlp-grpc', port: OTLP_GRPC_PORT, targetPort: 'otlp-grpc', appProtocol: 'grpc' };
  const spec = {
    selector: selector(meta.name, role),
    ports: role === 'web' ? [http, grpc] : [http],
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
export const specHashOf = (o: KubernetesObject): string =>
  o.metadata?.annotations?.[SPEC_HASH_ANNOTATION] ?? '';
