// The API server alone (test/fixtures/api-server.ts, envtest style): a CRD's CEL rules are enforced by
// the real kube-apiserver, with the rule's message, on create and (transition rules) on update.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiException, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type ControlPlane, startControlPlane } from '../fixtures/api-server.ts';

const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.test.observatory.dev' },
  spec: {
    group: 'test.observatory.dev',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  min: { type: 'integer' },
                  max: { type: 'integer' },
                  mode: {
                    type: 'string',
                    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'mode is immutable' }],
                  },
                },
                'x-kubernetes-validations': [
                  { rule: 'self.min <= self.max', message: 'min must not exceed max' },
                ],
              },
            },
          },
        },
      },
    ],
  },
};

let apiServer: ControlPlane;
let crdDir: string;

beforeAll(async () => {
  crdDir = await mkdtemp(join(tmpdir(), 'observatory-crds-'));
  await writeFile(join(crdDir, 'widgets.yaml'), stringify(widgetCrd));
  apiServer = await startControlPlane({ crdDirs: [crdDir] });
});
afterAll(async () => {
  await apiServer?.stop();
  if (crdDir) await rm(crdDir, { recursive: true, force: true });
});

it('a CRD with CEL rules rejects an invalid object and a forbidden transition with the rule messages', async () => {
  const custom = apiServer.kubeconfig.makeApiClient(CustomObjectsApi);
  const target = { group: 'test.observatory.dev', version: 'v1', namespace: 'default', plural: 'widgets' };
  const widget = (name: string, min: number, max: number, mode = 'a') => ({
    ...target,
    body: {
      apiVersion: 'test.observatory.dev/v1',
      kind: 'Widget',
      metadata: { name },
      spec: { min, max, mode },
    },
  });
  const rejected = await custom.createNamespacedCustomObject(widget('bad', 5, 1)).catch((e: unknown) => e);
  expect(rejected).toBeInstanceOf(ApiException);
  expect((rejected as ApiException<unknown>).code).toBe(422);
  expect(JSON.stringify((rejected as ApiException<unknown>).body)).toContain('min must not exceed max');

  await custom.createNamespacedCustomObject(widget('good', 1, 5));
  const current = (await custom.getNamespacedCustomObject({ ...target, name: 'good' })) as {
    spec: { mode: string };
  };
  current.spec.mode = 'b';
  const immutable = await custom
    .replaceNamespacedCustomObject({ ...target, name: 'good', body: current })
    .catch((e: unknown) => e);
  expect((immutable as ApiException<unknown>).code).toBe(422);
  expect(JSON.stringify((immutable as ApiException<unknown>).body)).toContain('mode is immutable');
});
