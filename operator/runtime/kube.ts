/**
 * Thin writes to the API server: server-side apply with one field manager, deletes with
 * background propagation, status replaced under optimistic concurrency, and Events.
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
} from '@kubernetes/client-node';

export const FIELD_MANAGER = 'observatory-operator';
export const GROUP = 'observatory.dev';
export const VERSION = 'v1alpha1';
export const PLURAL = 'observabilityservices';

export const statusCode = (err: unknown): number | undefined => (err as { code?: number }).code;

export class Kube {
  readonly objects: KubernetesObjectApi;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.objects = KubernetesObjectApi.makeApiClient(kc);
    this.core = kc.makeApiClient(CoreV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  /** Server-side apply: the operator owns exactly the fields it sets, and conflicts are forced. */
  apply<T extends KubernetesObject>(obj: T): Promise<T> {
    return this.objects.patch(obj, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
  }

  /**
   * Foreground: a deleted Job stays listed until its Pods are gone, so the planner never takes a
   * stopped Job's work as ended (or starts its successor) while its Pod still runs.
   */
  async delete(obj: KubernetesObject): Promise<void> {
    try {
      await this.objects.delete(obj, undefined, undefined, undefined, undefined, 'Foreground');
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
    }
  }

  /**
   * Replaces the status subresource; the object's resourceVersion makes the write fail with 409
   * when someone changed the object since it was read, and the caller re-reads and re-plans.
   * Resolves with the object as stored.
   */
  replaceStatus<T extends KubernetesObject & { status?: unknown }>(obj: T): Promise<T> {
    return this.custom.replaceNamespacedCustomObjectStatus({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      namespace: obj.metadata!.namespace!,
      name: obj.metadata!.name!,
      body: obj,
    });
  }

  async event(
    regarding: KubernetesObject,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    const now = new Date();
    const ns = regarding.metadata!.namespace!;
    await this.core.createNamespacedEvent({
      namespace: ns,
      body: {
        metadata: { generateName: `${regarding.metadata!.name}.`, namespace: ns },
        involvedObject: {
          apiVersion: regarding.apiVersion,
          kind: regarding.kind,
          name: regarding.metadata!.name,
          namespace: ns,
          uid: regarding.metadata!.uid,
          resourceVersion: regarding.metadata!.resourceVersion,
        },
        type,
        reason,
        message: message.slice(0, 1024),
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        source: { component: FIELD_MANAGER },
        reportingComponent: FIELD_MANAGER,
      },
    });
  }
}
