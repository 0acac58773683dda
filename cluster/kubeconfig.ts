// kubeconfig files: certificate users for the control plane and people, token users for Pods.
import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';

export type KubeconfigUser = { clientCertificate: string; clientKey: string } | { token: string };

export async function writeKubeconfig(
  path: string,
  options: { server: string; caFile: string; user: KubeconfigUser; name?: string; namespace?: string },
): Promise<void> {
  const name = options.name ?? 'observatory-test';
  const user =
    'token' in options.user
      ? { token: options.user.token }
      : { 'client-certificate': options.user.clientCertificate, 'client-key': options.user.clientKey };
  const context: Record<string, string> = { cluster: name, user: name };
  if (options.namespace) context['namespace'] = options.namespace;
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: options.server, 'certificate-authority': options.caFile } }],
    users: [{ name, user }],
    contexts: [{ name, context }],
    'current-context': name,
  };
  // Tokens and keys are credentials: owner-only.
  await writeFile(path, stringify(doc), { mode: 0o600 });
}
