// A container's environment as the kubelet computes it: envFrom, then env in order, with
// $(VAR) references expanded against what is defined so far, values from Secrets, ConfigMaps,
// the Pod's own fields and its resources. A missing required reference is an error the caller
// reports as CreateContainerConfigError (and retries), as the kubelet does.
import type { V1ConfigMap, V1Container, V1Pod, V1Secret } from '@kubernetes/client-node';
import { parseQuantity } from './quantity.ts';

export interface EnvSources {
  configMap(namespace: string, name: string): Promise<V1ConfigMap | undefined>;
  secret(namespace: string, name: string): Promise<V1Secret | undefined>;
}

export interface PodAddresses {
  podIP: string;
  hostIP: string;
}

/** Node capacity used when a container sets no limit (as the kubelet uses node allocatable). */
const nodeAllocatable: Record<string, string> = { cpu: '8', memory: '16Gi', 'ephemeral-storage': '100Gi' };

export class EnvError extends Error {}

/** Expands $(NAME) from vars; $$(NAME) is the escaped literal $(NAME); unknown references stay as written. */
export function expand(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (match === '$$') return '$';
    return name !== undefined && Object.hasOwn(vars, name) ? (vars[name] as string) : match;
  });
}

function decodeSecret(secret: V1Secret): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {}))
    out[key] = Buffer.from(value, 'base64').toString('utf8');
  for (const [key, value] of Object.entries(secret.stringData ?? {})) out[key] = value;
  return out;
}

function fieldValue(pod: V1Pod, path: string, addresses: PodAddresses): string {
  const meta = pod.metadata ?? {};
  const mapKey = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (mapKey) {
    const map = mapKey[1] === 'labels' ? meta.labels : meta.annotations;
    return map?.[mapKey[2] as string] ?? '';
  }
  switch (path) {
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? 'default';
    case 'status.podIP':
    case 'status.podIPs':
      return addresses.podIP;
    case 'status.hostIP':
    case 'status.hostIPs':
      return addresses.hostIP;
    default:
      throw new EnvError(`unsupported fieldRef ${path}`);
  }
}

function resourceValue(container: V1Container, resource: string, divisor: string | undefined): string {
  const [kind, name] = resource.split('.') as [string, string];
  const resources = container.resources ?? {};
  const own = (kind === 'limits' ? resources.limits : resources.requests)?.[name];
  const limit = resources.limits?.[name];
  const raw = own ?? (kind === 'requests' ? limit : undefined) ?? nodeAllocatable[name] ?? '0';
  const value = parseQuantity(String(raw));
  const unit = parseQuantity(divisor ?? '1');
  // The kubelet rounds up: a 250m CPU limit is 1 with the default divisor.
  return String(Math.ceil(value / unit));
}

export async function resolveEnv(
  pod: V1Pod,
  container: V1Container,
  addresses: PodAddresses,
  sources: EnvSources,
  base: Record<string, string>,
): Promise<Record<string, string>> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const env: Record<string, string> = { ...base };
  const configMaps = new Map<string, Promise<V1ConfigMap | undefined>>();
  const secrets = new Map<string, Promise<V1Secret | undefined>>();
  const configMap = (name: string) => {
    if (!configMaps.has(name)) configMaps.set(name, sources.configMap(namespace, name));
    return configMaps.get(name) as Promise<V1ConfigMap | undefined>;
  };
  const secret = (name: string) => {
    if (!secrets.has(name)) secrets.set(name, sources.secret(namespace, name));
    return secrets.get(name) as Promise<V1Secret | undefined>;
  };

  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      const found = await configMap(from.configMapRef.name ?? '');
      if (!found && !from.configMapRef.optional)
        throw new EnvError(`configmap "${from.configMapRef.name}" not found`);
      for (const [key, value] of Object.entries(found?.data ?? {})) env[prefix + key] = value;
    }
    if (from.secretRef) {
      const found = await secret(from.secretRef.name ?? '');
      if (!found && !from.secretRef.optional) throw new EnvError(`secret "${from.secretRef.name}" not found`);
      if (found) for (const [key, value] of Object.entries(decodeSecret(found))) env[prefix + key] = value;
    }
  }

  for (const variable of container.env ?? []) {
    const from = variable.valueFrom;
    if (!from) {
      env[variable.name] = expand(variable.value ?? '', env);
      continue;
    }
    if (from.fieldRef) {
      env[variable.name] = fieldValue(pod, from.fieldRef.fieldPath, addresses);
    } else if (from.resourceFieldRef) {
      const target = from.resourceFieldRef.containerName
        ? (pod.spec?.containers.find((c) => c.name === from.resourceFieldRef?.containerName) ?? container)
        : container;
      env[variable.name] = resourceValue(
        target,
        from.resourceFieldRef.resource,
        from.resourceFieldRef.divisor,
      );
    } else if (from.configMapKeyRef) {
      const ref = from.configMapKeyRef;
      const found = await configMap(ref.name ?? '');
      const value = found?.data?.[ref.key];
      if (value !== undefined) env[variable.name] = value;
      else if (!ref.optional) {
        throw new EnvError(
          found
            ? `couldn't find key ${ref.key} in ConfigMap ${namespace}/${ref.name}`
            : `configmap "${ref.name}" not found`,
        );
      }
    } else if (from.secretKeyRef) {
      const ref = from.secretKeyRef;
      const found = await secret(ref.name ?? '');
      const value = found ? decodeSecret(found)[ref.key] : undefined;
      if (value !== undefined) env[variable.name] = value;
      else if (!ref.optional) {
        throw new EnvError(
          found
            ? `couldn't find key ${ref.key} in Secret ${namespace}/${ref.name}`
            : `secret "${ref.name}" not found`,
        );
      }
    } else {
      throw new EnvError(`unsupported valueFrom for ${variable.name}`);
    }
  }
  return env;
}
