/**
 * Cost at ingestion, in process, as ratios measured side by side in one run:
 *   - pricing a merged observation row (match, tier, cost per usage type) against building that
 *     row from its event (the conversion ingestion already does per observation);
 *   - inferring usage with OpenAI's BPE, per KB of chat input, against building the row; and the
 *     tokenizer's own time per KB (informative: it depends on the machine).
 * The definitions are the repository's built-in price file.
 */
import { performance } from 'node:perf_hooks';
import { ProjectPricing, priceLegacyRow } from '../../server/features/models/apply.ts';
import { BUILT_IN_PRICE_FILE, readPriceFile } from '../../server/features/models/price-file.ts';
import { compileModels } from '../../server/features/models/pricing.ts';
import { warmTokenizers } from '../../server/features/models/tokenize.ts';
import {
  applyObservation,
  emptyObservationRow,
  type Row,
} from '../../server/features/write-model/records.ts';
import { line, ratio } from './report.ts';

const ROWS = 20_000;
const MODELS = [
  'gpt-4o',
  'gpt-4o-mini',
  'claude-sonnet-4-5-20250929',
  'gemini-2.5-pro',
  'mistral-large-latest',
];

function timed(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

export async function benchCost(): Promise<void> {
  const defs = readPriceFile(BUILT_IN_PRICE_FILE).map((e) => ({ ...e, projectId: null, createdAt: '' }));
  const pricing = new ProjectPricing(compileModels(defs));
  warmTokenizers();
  const ctx = { projectId: 'bench', now: Date.now() };
  const message = 'Summarize the quarterly report for the board, focusing on revenue and risks. ';
  const chat = JSON.stringify([
    { role: 'system', content: 'You are a concise analyst.' },
    { role: 'user', content: message.repeat(13) },
  ]);
  const build = (i: number, withUsage: boolean): Row =>
    applyObservation(
      emptyObservationRow(ctx, `o-${i}`, `t-${i}`, 'GENERATION', '2026-11-01T10:00:00.000Z'),
      {
        model: MODELS[i % MODELS.length]!,
        input: chat,
        output: 'Revenue grew; the main risk is supply.',
        ...(withUsage ? { usageDetails: { input: 1200 + i, output: 300 } } : {}),
      },
      ctx,
    );

  // Warm both paths once, then measure alternately so load changes hit both alike.
  for (let i = 0; i < 500; i++) priceLegacyRow(pricing, build(i, true));
  let buildMs = 0;
  let priceMs = 0;
  for (let round = 0; round < 4; round++) {
    let rows: Row[] = [];
    buildMs += timed(() => {
      rows = Array.from({ length: ROWS / 4 }, (_, i) => build(i, true));
    });
    priceMs += timed(() => {
      for (const r of rows) priceLegacyRow(pricing, r);
    });
  }
  line('cost: pricing a row / building it (usage sent)', ratio(priceMs, buildMs));

  const tokenized = 500;
  let tokenRows: Row[] = [];
  const tokenBuildMs = timed(() => {
    tokenRows = Array.from({ length: tokenized }, (_, i) => build(i * MODELS.length, false));
  });
  const inferMs = timed(() => {
    for (const r of tokenRows) priceLegacyRow(pricing, r);
  });
  const kb = (tokenized * Buffer.byteLength(chat)) / 1024;
  line('cost: inferring usage and pricing / building (no usage)', ratio(inferMs, tokenBuildMs));
  line('cost: tokenizer ms per KB of chat input (o200k)', (inferMs / kb).toFixed(3));
}
