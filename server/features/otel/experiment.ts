import {
  type Attributes,
  attr,
  firstText,
  isMeaningful,
  isPlainObject,
  LF,
  parseJsonish,
  toStringRecord,
} from './attributes.ts';
import { normalizeIso } from './time.ts';
import type { OtelExperiment } from './types.ts';

const EXPERIMENT_KEYS = [
  LF.EXPERIMENT_ID,
  LF.EXPERIMENT_NAME,
  LF.EXPERIMENT_METADATA,
  LF.EXPERIMENT_DESCRIPTION,
  LF.EXPERIMENT_DATASET_ID,
  LF.EXPERIMENT_ITEM_ID,
  LF.EXPERIMENT_ITEM_VERSION,
  LF.EXPERIMENT_ITEM_METADATA,
  LF.EXPERIMENT_ITEM_ROOT_OBSERVATION_ID,
  LF.EXPERIMENT_ITEM_EXPECTED_OUTPUT,
];

/** JSON-object attribute → top-level key → string; anything else (absent, invalid, not an object) → {}. */
function jsonObject(attrs: Attributes, key: string): Record<string, string> {
  const parsed = parseJsonish(attr(attrs, key));
  return isPlainObject(parsed) ? toStringRecord(parsed) : {};
}

/** Experiment (dataset run) fields set by the SDK experiment runner; null when the span has none. */
export function extractExperiment(attrs: Attributes): OtelExperiment | null {
  if (!EXPERIMENT_KEYS.some((k) => isMeaningful(attr(attrs, k)))) return null;
  const version = firstText(attrs, [LF.EXPERIMENT_ITEM_VERSION]);
  return {
    id: firstText(attrs, [LF.EXPERIMENT_ID]),
    name: firstText(attrs, [LF.EXPERIMENT_NAME]),
    metadata: jsonObject(attrs, LF.EXPERIMENT_METADATA),
    description: firstText(attrs, [LF.EXPERIMENT_DESCRIPTION]),
    datasetId: firstText(attrs, [LF.EXPERIMENT_DATASET_ID]),
    itemId: firstText(attrs, [LF.EXPERIMENT_ITEM_ID]),
    itemVersion: version === null ? null : normalizeIso(version),
    itemMetadata: jsonObject(attrs, LF.EXPERIMENT_ITEM_METADATA),
    itemRootObservationId: firstText(attrs, [LF.EXPERIMENT_ITEM_ROOT_OBSERVATION_ID]),
    itemExpectedOutput: firstText(attrs, [LF.EXPERIMENT_ITEM_EXPECTED_OUTPUT]),
  };
}
