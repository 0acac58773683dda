// A plain HTTPS request to the API server with a kubeconfig's credentials. client-node's typed
// clients re-serialize bodies through their models, which drops fields they do not model under
// the wire name (e.g. `x-kubernetes-validations` in CRD schemas); this sends bytes as given.
import { type RequestOptions, request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { exchange } from './exchange.ts';

export async function rawRequest(
  kc: KubeConfig,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: string }> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig has no current cluster');
  const url = new URL(server + path);
  const options: RequestOptions = { method, headers: { accept: 'application/json' } };
  await kc.applyToHTTPSOptions(options);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined) options.headers = { ...options.headers, 'content-type': contentType };
  const res = await exchange(request(url, options), payload, 60_000);
  if (res.error !== undefined) throw new Error(`${method} ${path}: ${res.error}`);
  return { status: res.status, body: res.body };
}
