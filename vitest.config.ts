import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Each file starts its own datastores; two cores do not profit from more parallelism.
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'conformance',
          include: ['test/conformance/**/*.test.ts'],
          // Installs the public Python SDKs (cached) and starts the service once per write mode.
          globalSetup: ['test/conformance/global-setup.ts'],
          // Data from SDKs that are not real-time arrives in dual after a 3-minute staging window.
          testTimeout: 420_000,
          hookTimeout: 900_000,
          maxConcurrency: 6,
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'oracle',
          include: ['test/oracle/**/*.test.ts'],
          testTimeout: 1_800_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          // Builds the control plane on a fresh machine before any test runs.
          globalSetup: ['test/cluster/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          // Each file runs its own cluster (four processes); two cores fit two at a time.
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/cluster/global-setup.ts'],
          testTimeout: 900_000,
          hookTimeout: 300_000,
          // One whole deployment (datastores, cluster, operator, pods) per file at a time.
          maxWorkers: 1,
        },
      },
      {
        test: {
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          // Builds the node's programs and images (each a step with its time) before any test runs.
          globalSetup: ['test/node/global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          // One real node per machine: its files run one after another.
          maxWorkers: 1,
        },
      },
      {
        test: {
          name: 'chart',
          include: ['test/chart/**/*.test.ts'],
          // Builds helm and kubeconform from the Go module proxy on a fresh machine before any test runs.
          globalSetup: ['test/chart/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
