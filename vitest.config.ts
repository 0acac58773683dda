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
          name: 'api-server',
          include: ['test/api-server/**/*.test.ts'],
          // An API server alone per file (test/fixtures/api-server.ts): seconds to start, no root, no node.
          globalSetup: ['test/api-server/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          // Builds (each build a step with its time) and starts the local cluster with its real node
          // once; every file uses it through inject('localCluster'), in namespaces of its own.
          globalSetup: ['test/cluster/global-setup.ts'],
          testTimeout: 900_000,
          hookTimeout: 600_000,
          // One real node per machine: the files share it one after another.
          maxWorkers: 1,
        },
      },
      {
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          // Installs Debian's chromium when missing (a step with its time) and builds the UI once.
          globalSetup: ['test/browser/global-setup.ts'],
          // Every browser wait is bounded far below these by playwright's own timeouts.
          testTimeout: 300_000,
          hookTimeout: 180_000,
          // expect.poll reads the page until it shows what is expected, within a bound.
          expect: { poll: { timeout: 15_000, interval: 100 } },
          maxWorkers: 2,
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
