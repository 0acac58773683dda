// The real CRD on an API server alone: spec.propagation.chunkRows is defaulted and bounded by the
// API server from the contract's range, and the worker's extra env may not set the variable the
// operator renders from it.
import { ApiException, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { ENV, ENV_DEFAULTS, ENV_LIMITS } from '../../server/contract/env.ts';
import { API_GROUP } from '../../server/contract/retries.ts';
import { type ControlPlane, startControlPlane } from '../fixtures/api-server.ts';
import { minimalService, minimalSpec } from '../fixtures/obsvc-spec.ts';

let api: ControlPlane;
let custom: CustomObjectsApi;
const target = {
  group: API_GROUP,
  version: 'v1alpha1',
  namespace: 'default',
  plural: 'observabilityservices',
};

beforeAll(async () => {
  api = await startControlPlane();
  custom = api.kubeconfig.makeApiClient(CustomObjectsApi);
});
afterAll(async () => {
  await api?.stop();
});

const object = (name: string, extra: Partial<ObservabilityServiceSpec>) => ({
  ...target,
  body: minimalService({ ...minimalSpec('Dual'), ...extra }, { name, namespace: target.namespace }),
});

const refusal = async (name: string, extra: Partial<ObservabilityServiceSpec>) => {
  const e = await custom.createNamespacedCustomObject(object(name, extra)).catch((err: unknown) => err);
  expect(e).toBeInstanceOf(ApiException);
  expect((e as ApiException<unknown>).code).toBe(422);
  return JSON.stringify((e as ApiException<unknown>).body);
};

describe('spec.propagation.chunkRows on the API server', () => {
  it('defaults it, keeps a value in range, and refuses one outside the contract range', async () => {
    const defaulted = (await custom.createNamespacedCustomObject(object('defaulted', {}))) as {
      spec: { propagation: { chunkRows: number } };
    };
    expect(defaulted.spec.propagation.chunkRows).toBe(ENV_DEFAULTS.propagationChunkRows);
    const set = (await custom.createNamespacedCustomObject(
      object('set', { propagation: { chunkRows: ENV_LIMITS.propagationChunkRows.max } }),
    )) as { spec: { propagation: { chunkRows: number } } };
    expect(set.spec.propagation.chunkRows).toBe(ENV_LIMITS.propagationChunkRows.max);

    expect(
      await refusal('zero', { propagation: { chunkRows: ENV_LIMITS.propagationChunkRows.min - 1 } }),
    ).toContain('spec.propagation.chunkRows');
    expect(
      await refusal('huge', { propagation: { chunkRows: ENV_LIMITS.propagationChunkRows.max + 1 } }),
    ).toContain('spec.propagation.chunkRows');
  });

  it('refuses the variable in the worker extra env, naming it', async () => {
    const body = await refusal('owned', {
      worker: { template: { env: [{ name: ENV.propagationChunkRows, value: '10' }] } },
    });
    expect(body).toContain(`env ${ENV.propagationChunkRows} is set by the operator`);
  });
});
