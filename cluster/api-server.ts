// A Kubernetes API server alone, as controller-runtime's envtest runs it: etcd and kube-apiserver
// of the control plane's release on loopback, no controllers and no node. For tests of what only
// the API server decides (CRD schemas and CEL rules, admission, RBAC, server-side apply): it starts
// in a few seconds, needs no root and leaves the machine as it was, so any number run side by side.
// Nothing reconciles here: no Pods run, no service accounts or namespaces are cleaned up.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { bootApiServer } from './control-plane.ts';
import { ensureControlPlane, kubernetesVersion } from './control-plane-binary.ts';
import { applyCrdDirs } from './crds.ts';
import { type KubectlRunner, kubectlRunner } from './kubectl.ts';
import { crdDir } from './paths.ts';
import type { Supervised } from './processes.ts';

export interface ControlPlaneOptions {
  /** Directories whose *.yaml objects (CRDs) are applied before it is handed out; default crds/. */
  crdDirs?: string[];
  verbosity?: number;
  startTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface ControlPlane {
  /** Admin kubeconfig (system:masters). */
  kubeconfigPath: string;
  kubeconfig: KubeConfig;
  server: string;
  /** kubectl of the same release. */
  kubectlPath: string;
  kubectl: KubectlRunner;
  version: string;
  stop(): Promise<void>;
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const binary = await ensureControlPlane(options.log);
  const dataDir = await mkdtemp(join(tmpdir(), 'observatory-apiserver-'));
  const processes: Supervised[] = [];
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    // Throwaway state: no orderly shutdown is needed.
    stopped ??= Promise.all(processes.map((p) => p.stop(1000))).then(() =>
      rm(dataDir, { recursive: true, force: true }),
    );
    return stopped;
  };
  try {
    const booted = await bootApiServer({
      binary,
      dataDir,
      host: '127.0.0.1',
      nodeName: 'no-node',
      verbosity: options.verbosity ?? 1,
      timeoutMs: options.startTimeoutMs ?? 120_000,
      kubelet: false,
      processes,
    });
    const kubeconfig = new KubeConfig();
    kubeconfig.loadFromFile(booted.kubeconfigPath);
    await Promise.race([booted.crashed, applyCrdDirs(kubeconfig, options.crdDirs ?? [crdDir])]);
    const kubectlPath = join(binary, '..', 'kubectl');
    return {
      kubeconfigPath: booted.kubeconfigPath,
      kubeconfig,
      server: booted.server,
      kubectlPath,
      kubectl: kubectlRunner(kubectlPath, booted.kubeconfigPath),
      version: kubernetesVersion,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
