// The real CRD on an API server alone: spec.propagation.chunkRows is defaulted and bounded by the
// API server from the contract's range, and the worker's extra env may not set the variable the
// operator renders from it.
import { describe, expect, it } from 'vitest';
import { ENV, ENV_DEFAULTS, ENV_LIMITS } from '../../server/contract/env.ts';
import { crdOnApiServer } from '../fixtures/operator/crd-on-api-server.ts';

const { create, refusal } = crdOnApiServer();

describe('spec.propagation.chunkRows on the API server', () => {
  it('defaults it, keeps a value in range, and refuses one outside the contract range', async () => {
    const defaulted = await create<{ spec: { propagation: { chunkRows: number } } }>('defaulted', {});
    expect(defaulted.spec.propagation.chunkRows).toBe(ENV_DEFAULTS.propagationChunkRows);
    const set = await create<{ spec: { propagation: { chunkRows: number } } }>('set', {
      propagation: { chunkRows: ENV_LIMITS.propagationChunkRows.max },
    });
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
