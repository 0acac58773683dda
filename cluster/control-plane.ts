// Starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler of one cluster as child
// processes of the multi-call binary, with the flags a single-node cluster on this machine needs
// (local-cluster.ts), or etcd and the API server alone on loopback (test/fixtures/api-server.ts).
import { mkdir, readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { exchange } from './exchange.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import { type ClientIdentity, createPki, type Pki } from './pki.ts';
import { freePort } from './ports.ts';
import { type Supervised, startProcess } from './processes.ts';
import { waitFor } from './wait.ts';

export interface ControlPlaneLayout {
  binary: string;
  dataDir: string;
  host: string;
  /** Where etcd listens (default host): loopback when host is reachable from Pods. */
  etcdHost?: string;
  apiPort: number;
  etcdPort: number;
  etcdPeerPort: number;
  pki: Pki;
  controllerManagerKubeconfig: string;
  schedulerKubeconfig: string;
  verbosity: number;
  /** Set when a real kubelet runs the node (cluster/local-cluster.ts): host is then a non-loopback
   * local address, the `kubernetes` Service gets its endpoint, and the API server talks to the
   * kubelet (logs, exec) by the node's InternalIP with this identity. */
  kubelet?: { clientCert: string; clientKey: string };
}

export const serviceAccountIssuer = 'https://kubernetes.default.svc.cluster.local';

function componentEnv(): NodeJS.ProcessEnv {
  // A clean environment: a person's KUBECONFIG or proxy settings must not leak into the cluster.
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: process.env['HOME'] ?? '/tmp',
    // The binary arms PR_SET_PDEATHSIG against this pid: the cluster dies with the harness.
    CONTROLPLANE_PARENT_PID: String(process.pid),
  };
}

function start(layout: ControlPlaneLayout, name: string, args: string[]): Supervised {
  return startProcess({
    name,
    file: layout.binary,
    args: [name, ...args],
    env: componentEnv(),
    cwd: layout.dataDir,
    logPath: join(layout.dataDir, 'logs', `${name}.log`),
  });
}

export async function tail(path: string, lines = 30): Promise<string> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Rejects as soon as the process exits, quoting its log: a crashed component fails fast. */
export async function failOnExit(process: Supervised): Promise<never> {
  const status = await process.exited;
  throw new Error(
    `${process.name} exited (code ${status.code}, signal ${status.signal}); last log lines:\n${await tail(process.logPath)}`,
  );
}

export function startEtcd(layout: ControlPlaneLayout): Supervised {
  return start(layout, 'etcd', [
    `--data-dir=${join(layout.dataDir, 'etcd')}`,
    `--listen-client-url=http://${layout.etcdHost ?? layout.host}:${layout.etcdPort}`,
    `--listen-peer-url=http://${layout.etcdHost ?? layout.host}:${layout.etcdPeerPort}`,
    // Throwaway data: durability is not worth the disk flushes.
    '--unsafe-no-fsync',
  ]);
}

export function startApiServer(layout: ControlPlaneLayout): Supervised {
  const { pki } = layout;
  return start(layout, 'kube-apiserver', [
    `--etcd-servers=http://${layout.etcdHost ?? layout.host}:${layout.etcdPort}`,
    `--bind-address=${layout.host}`,
    `--advertise-address=${layout.host}`,
    `--secure-port=${layout.apiPort}`,
    `--tls-cert-file=${pki.serverCert}`,
    `--tls-private-key-file=${pki.serverKey}`,
    `--client-ca-file=${pki.caCert}`,
    `--service-account-issuer=${serviceAccountIssuer}`,
    `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    // Node + RBAC as in a real cluster: the kubelet is held to what a node may do.
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction',
    '--service-cluster-ip-range=10.96.0.0/16',
    ...(layout.kubelet
      ? [
          `--kubelet-client-certificate=${layout.kubelet.clientCert}`,
          `--kubelet-client-key=${layout.kubelet.clientKey}`,
          // Never the node's hostname: resolving it would ask the machine's resolver (off-machine).
          '--kubelet-preferred-address-types=InternalIP',
        ]
      : // Endpoints may not hold loopback addresses, so the `kubernetes` Service is not reconciled.
        ['--endpoint-reconciler-type=none']),
    '--allow-privileged=true',
    '--profiling=false',
    `--cert-dir=${join(layout.dataDir, 'apiserver')}`,
    `--v=${layout.verbosity}`,
  ]);
}

export function startControllerManager(layout: ControlPlaneLayout): Supervised {
  return start(layout, 'kube-controller-manager', [
    `--kubeconfig=${layout.controllerManagerKubeconfig}`,
    '--secure-port=0', // no metrics/health endpoint: one port fewer per cluster
    '--leader-elect=false',
    // Each controller acts as its own service account, as in kubeadm clusters.
    '--use-service-account-credentials=true',
    `--root-ca-file=${layout.pki.caCert}`,
    `--service-account-private-key-file=${layout.pki.serviceAccountKey}`,
    '--cluster-name=observatory-test',
    `--v=${layout.verbosity}`,
  ]);
}

export function startScheduler(layout: ControlPlaneLayout): Supervised {
  return start(layout, 'kube-scheduler', [
    `--kubeconfig=${layout.schedulerKubeconfig}`,
    '--secure-port=0',
    '--leader-elect=false',
    `--v=${layout.verbosity}`,
  ]);
}

/** GET a path of the API server as admin; resolves with status code and body. */
export async function adminGet(
  layout: ControlPlaneLayout,
  path: string,
): Promise<{ status: number; body: string }> {
  const [ca, cert, key] = await Promise.all([
    readFile(layout.pki.caCert),
    readFile(layout.pki.admin.cert),
    readFile(layout.pki.admin.key),
  ]);
  const req = request({
    host: layout.host,
    port: layout.apiPort,
    path,
    method: 'GET',
    ca,
    cert,
    key,
    timeout: 5000,
  });
  const res = await exchange(req, undefined, 15_000);
  if (res.error !== undefined) throw new Error(`GET ${path}: ${res.error}`);
  return { status: res.status, body: res.body };
}

export async function waitApiServerReady(layout: ControlPlaneLayout, timeoutMs: number): Promise<void> {
  await waitFor(
    'kube-apiserver /readyz',
    async () => (await adminGet(layout, '/readyz').catch(() => ({ status: 0 }))).status === 200,
    { timeoutMs, intervalMs: 200 },
  );
}

export async function makeDataDirs(dataDir: string): Promise<void> {
  await mkdir(join(dataDir, 'logs'), { recursive: true });
  await mkdir(join(dataDir, 'etcd'), { recursive: true, mode: 0o700 });
}

export interface BootedApiServer {
  layout: ControlPlaneLayout;
  server: string;
  /** The admin kubeconfig (system:masters). */
  kubeconfigPath: string;
  /** Writes a kubeconfig for one of the PKI's identities; returns its path. */
  kubeconfigFor(name: string, identity: ClientIdentity): Promise<string>;
  /** Rejects as soon as etcd or the API server exits. */
  crashed: Promise<never>;
}

/**
 * The certificates, kubeconfigs and the first two processes every cluster needs: etcd (on loopback)
 * and kube-apiserver on host, ready when /readyz answers. The processes go into `processes` as
 * they start, so a caller's stop() reaches them even when the start fails half-way.
 */
export async function bootApiServer(options: {
  binary: string;
  dataDir: string;
  host: string;
  nodeName: string;
  verbosity: number;
  timeoutMs: number;
  /** A real kubelet runs the node: the API server talks to it (logs, exec) and reconciles `kubernetes`. */
  kubelet: boolean;
  processes: Supervised[];
}): Promise<BootedApiServer> {
  const { dataDir, host } = options;
  const apiPort = await freePort(host);
  const [etcdPort, etcdPeerPort] = [await freePort(), await freePort()];
  const server = `https://${host}:${apiPort}`;
  await makeDataDirs(dataDir);
  const pki = await createPki(join(dataDir, 'pki'), host, options.nodeName);
  const kubeconfigFor = async (name: string, identity: ClientIdentity) => {
    const path = join(dataDir, name === 'admin' ? 'kubeconfig' : `${name}.kubeconfig`);
    await writeKubeconfig(path, {
      server,
      caFile: pki.caCert,
      user: { clientCertificate: identity.cert, clientKey: identity.key },
    });
    return path;
  };
  const [kubeconfigPath, controllerManagerKubeconfig, schedulerKubeconfig] = await Promise.all([
    kubeconfigFor('admin', pki.admin),
    kubeconfigFor('kube-controller-manager', pki.controllerManager),
    kubeconfigFor('kube-scheduler', pki.scheduler),
  ]);
  const layout: ControlPlaneLayout = {
    binary: options.binary,
    dataDir,
    host,
    etcdHost: '127.0.0.1',
    apiPort,
    etcdPort,
    etcdPeerPort,
    pki,
    controllerManagerKubeconfig,
    schedulerKubeconfig,
    verbosity: options.verbosity,
    ...(options.kubelet
      ? { kubelet: { clientCert: pki.kubeletClient.cert, clientKey: pki.kubeletClient.key } }
      : {}),
  };
  const crashed = Promise.race(
    [startEtcd(layout), startApiServer(layout)].map((p) => watch(options.processes, p)),
  );
  crashed.catch(() => {});
  await Promise.race([crashed, waitApiServerReady(layout, options.timeoutMs)]);
  return { layout, server, kubeconfigPath, kubeconfigFor, crashed };
}

/** Records a started process in `list`; the promise rejects (with its log) when it exits. */
export function watch(list: Supervised[], process: Supervised): Promise<never> {
  list.push(process);
  const crashed = failOnExit(process);
  crashed.catch(() => {});
  return crashed;
}
