/** Datasets, their items and runs, and the comparison of runs item by item. */
import { call, type NumberedPage, projectPath, queryString } from '../../shared/api.ts';
import type { Score } from '../traces/api.ts';

export interface Dataset {
  id: string;
  name: string;
  description: string | null;
  createdAt?: string;
}

export interface DatasetItem {
  id: string;
  status: string;
  input: unknown;
  expectedOutput: unknown;
  metadata: unknown;
  createdAt: string;
}

export interface DatasetRun {
  id: string;
  name: string;
  description: string | null;
  createdAt: string | null;
  itemCount: number | null;
}

export interface RunResult {
  runId: string;
  itemId: string;
  traceId: string;
  output: string | null;
  scores: Score[];
}

export interface RunComparison {
  runs: DatasetRun[];
  rows: { item: DatasetItem; results: (RunResult | null)[] }[];
  means: Record<string, number>[];
}

export const datasetsApi = {
  datasets: (id: string, page: number) =>
    call<NumberedPage<Dataset>>('GET', `${projectPath(id)}/datasets?page=${page}`),
  dataset: (id: string, datasetId: string, page: number) =>
    call<{ dataset: Dataset; items: NumberedPage<DatasetItem>; runs: DatasetRun[] }>(
      'GET',
      `${projectPath(id)}/datasets/${encodeURIComponent(datasetId)}?page=${page}`,
    ),
  compareRuns: (id: string, datasetId: string, runs: string[]) =>
    call<RunComparison>(
      'GET',
      `${projectPath(id)}/datasets/${encodeURIComponent(datasetId)}/compare?${queryString({ runs: runs.join(',') })}`,
    ),
};
