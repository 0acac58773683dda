// The Node object of the local node agent: registered Ready with the capacity of a small machine,
// kept alive by renewing its Lease in kube-node-lease (what the node lifecycle controller watches)
// and by refreshing the status heartbeat now and then, as the kubelet does.
import { release } from 'node:os';
import {
  ApiException,
  type CoordinationV1Api,
  type CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
} from '@kubernetes/client-node';
import { fieldManager } from './pod-worker.ts';

export interface NodeIdentity {
  name: string;
  hostIP: string;
  kubeletVersion: string;
}

const leaseDurationSeconds = 40;
const leaseRenewMs = 10_000;
const statusRefreshMs = 60_000;
const apply = () => setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
/** MicroTime wants exactly six fractional digits. */
const microTime = (date: Date) => date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export const capacity = { cpu: '8', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' };

function nodeStatus(node: NodeIdentity, since: Date) {
  const now = new Date().toISOString();
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: now,
    lastTransitionTime: since.toISOString(),
  });
  return {
    capacity,
    allocatable: capacity,
    conditions: [
      condition(
        'MemoryPressure',
        'False',
        'KubeletHasSufficientMemory',
        'local node agent has sufficient memory',
      ),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'local node agent has no disk pressure'),
      condition(
        'PIDPressure',
        'False',
        'KubeletHasSufficientPID',
        'local node agent has sufficient PID available',
      ),
      condition('Ready', 'True', 'KubeletReady', 'local node agent is posting ready status'),
    ],
    addresses: [
      { type: 'InternalIP', address: node.hostIP },
      { type: 'Hostname', address: node.name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
    nodeInfo: {
      machineID: node.name,
      systemUUID: node.name,
      bootID: node.name,
      kernelVersion: release(),
      osImage: 'Observatory local node agent (processes on the host)',
      containerRuntimeVersion: 'local://1',
      kubeletVersion: node.kubeletVersion,
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}

export class NodeRegistration {
  private readonly since = new Date();
  private leaseTimer: NodeJS.Timeout | undefined;
  private statusTimer: NodeJS.Timeout | undefined;
  private uid = '';

  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;
  private readonly node: NodeIdentity;
  private readonly log: (message: string) => void;

  constructor(
    core: CoreV1Api,
    coordination: CoordinationV1Api,
    node: NodeIdentity,
    log: (message: string) => void,
  ) {
    this.core = core;
    this.coordination = coordination;
    this.node = node;
    this.log = log;
  }

  async register(): Promise<void> {
    const body: V1Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: this.node.name,
        labels: {
          'kubernetes.io/hostname': this.node.name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
        },
      },
    };
    try {
      this.uid = (await this.core.createNode({ body })).metadata?.uid ?? '';
    } catch (error) {
      if (!(error instanceof ApiException && error.code === 409)) throw error;
      this.uid = (await this.core.readNode({ name: this.node.name })).metadata?.uid ?? '';
    }
    await this.postStatus();
    await this.renewLease();
    this.leaseTimer = setInterval(
      () => void this.renewLease().catch((e: Error) => this.log(`lease: ${e.message}`)),
      leaseRenewMs,
    );
    this.statusTimer = setInterval(
      () => void this.postStatus().catch((e: Error) => this.log(`node status: ${e.message}`)),
      statusRefreshMs,
    );
  }

  stop(): void {
    clearInterval(this.leaseTimer);
    clearInterval(this.statusTimer);
  }

  private async postStatus(): Promise<void> {
    await this.core.patchNodeStatus(
      {
        name: this.node.name,
        body: {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name: this.node.name },
          status: nodeStatus(this.node, this.since),
        },
        fieldManager,
        force: true,
      },
      apply(),
    );
  }

  private async renewLease(): Promise<void> {
    await this.coordination.patchNamespacedLease(
      {
        name: this.node.name,
        namespace: 'kube-node-lease',
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: {
            name: this.node.name,
            namespace: 'kube-node-lease',
            ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.node.name, uid: this.uid }],
          },
          spec: { holderIdentity: this.node.name, leaseDurationSeconds, renewTime: microTime(new Date()) },
        },
        fieldManager,
        force: true,
      },
      apply(),
    );
  }
}
