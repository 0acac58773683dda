// A plain HTTPS request to the API server with a kubeconfig's credentials. client-node's typed
// clients re-serialize bodies through their models, which drops fields they do not model under
// the wire name (e.g. `x-kubernetes-validations` in CRD schemas); this sends bytes as given.
import { type RequestOptions, request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

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
  return new Promise((resolve, reject) => {
    const req = request(url, options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}
