// Certificates and keys for one cluster: a CA, the API server's serving certificate, one client
// certificate per identity (admin in system:masters, the controller manager, the scheduler, the
// node in system:nodes so the Node authorizer applies to the kubelet), and the service-account
// signing key pair. X.509 comes from the openssl CLI (node:crypto cannot issue certificates).
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ClientIdentity {
  cert: string;
  key: string;
}

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  admin: ClientIdentity;
  controllerManager: ClientIdentity;
  scheduler: ClientIdentity;
  node: ClientIdentity;
  /** The API server's identity towards kubelets (logs, exec), a cluster admin as in kubeadm. */
  kubeletClient: ClientIdentity;
  /** kube-proxy's identity, bound to system:node-proxier by the default RBAC. */
  kubeProxy: ClientIdentity;
}

interface CertRequest {
  name: string;
  subject: string;
  extendedKeyUsage: string;
  altNames?: string[];
}

async function issue(
  dir: string,
  ca: { cert: string; key: string },
  req: CertRequest,
): Promise<ClientIdentity> {
  const cert = join(dir, `${req.name}.crt`);
  const key = join(dir, `${req.name}.key`);
  const config = join(dir, `${req.name}.cnf`);
  // An explicit config so no extension comes from the system openssl.cnf (e.g. CA:TRUE on leaves).
  const lines = [
    '[req]',
    'distinguished_name = dn',
    'x509_extensions = ext',
    'prompt = no',
    '[dn]',
    '[ext]',
    'basicConstraints = critical, CA:FALSE',
    'keyUsage = critical, digitalSignature, keyEncipherment',
    `extendedKeyUsage = ${req.extendedKeyUsage}`,
  ];
  if (req.altNames?.length) lines.push(`subjectAltName = ${req.altNames.join(', ')}`);
  await writeFile(config, `${lines.join('\n')}\n`);
  await run('openssl', [
    'req',
    '-x509',
    '-config',
    config,
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '365',
    '-subj',
    req.subject,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
  ]);
  return { cert, key };
}

export async function createPki(dir: string, host: string, nodeName: string): Promise<Pki> {
  await mkdir(dir, { recursive: true });
  const caCert = join(dir, 'ca.crt');
  const caKey = join(dir, 'ca.key');
  const caConfig = join(dir, 'ca.cnf');
  await writeFile(
    caConfig,
    [
      '[req]',
      'distinguished_name = dn',
      'x509_extensions = ext',
      'prompt = no',
      '[dn]',
      '[ext]',
      'basicConstraints = critical, CA:TRUE',
      'keyUsage = critical, keyCertSign, cRLSign, digitalSignature',
      'subjectKeyIdentifier = hash',
      '',
    ].join('\n'),
  );
  await run('openssl', [
    'req',
    '-x509',
    '-config',
    caConfig,
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    caCert,
    '-days',
    '3650',
    '-subj',
    '/CN=observatory-test-cluster-ca',
  ]);
  const ca = { cert: caCert, key: caKey };
  const client = 'clientAuth';
  const [server, admin, controllerManager, scheduler, node, kubeletClient, kubeProxy] = await Promise.all([
    issue(dir, ca, {
      name: 'kube-apiserver',
      subject: '/CN=kube-apiserver',
      extendedKeyUsage: 'serverAuth',
      altNames: [
        `IP:${host}`,
        'IP:127.0.0.1',
        'IP:10.96.0.1',
        'DNS:localhost',
        'DNS:kubernetes',
        'DNS:kubernetes.default',
        'DNS:kubernetes.default.svc',
        'DNS:kubernetes.default.svc.cluster.local',
      ],
    }),
    issue(dir, ca, {
      name: 'admin',
      subject: '/O=system:masters/CN=observatory-admin',
      extendedKeyUsage: client,
    }),
    issue(dir, ca, {
      name: 'kube-controller-manager',
      subject: '/CN=system:kube-controller-manager',
      extendedKeyUsage: client,
    }),
    issue(dir, ca, {
      name: 'kube-scheduler',
      subject: '/CN=system:kube-scheduler',
      extendedKeyUsage: client,
    }),
    issue(dir, ca, {
      name: 'node',
      subject: `/O=system:nodes/CN=system:node:${nodeName}`,
      extendedKeyUsage: client,
    }),
    issue(dir, ca, {
      name: 'kube-apiserver-kubelet-client',
      subject: '/O=system:masters/CN=kube-apiserver-kubelet-client',
      extendedKeyUsage: client,
    }),
    issue(dir, ca, { name: 'kube-proxy', subject: '/CN=system:kube-proxy', extendedKeyUsage: client }),
  ]);
  // Service-account tokens are signed with ES256; the API server verifies with the public half.
  const { privateKey, publicKey } = generateKeyPairSync('ec', {
    namedCurve: 'prime256v1',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const serviceAccountKey = join(dir, 'sa.key');
  const serviceAccountPub = join(dir, 'sa.pub');
  await writeFile(serviceAccountKey, privateKey, { mode: 0o600 });
  await writeFile(serviceAccountPub, publicKey);
  return {
    dir,
    caCert,
    caKey,
    serverCert: server.cert,
    serverKey: server.key,
    serviceAccountKey,
    serviceAccountPub,
    admin,
    controllerManager,
    scheduler,
    node,
    kubeletClient,
    kubeProxy,
  };
}
