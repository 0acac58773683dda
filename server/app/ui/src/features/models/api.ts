/** A project's model definitions (prices, tokenizers) and which one a model name matches. */
import { call, projectPath, queryString } from '../../shared/api.ts';

export interface PricingTier {
  id?: string;
  name: string;
  isDefault: boolean;
  priority: number;
  conditions: Record<string, unknown>[];
  prices: Record<string, number>;
}

/** A model definition as the models API answers it (server/features/models/definitions.ts `toApiModel`). */
export interface ModelDefinition {
  id: string;
  modelName: string;
  matchPattern: string;
  startDate: string | null;
  unit: string | null;
  tokenizerId: string | null;
  tokenizerConfig: unknown;
  isLangfuseManaged: boolean;
  pricingTiers: PricingTier[];
}

/** A model definition as the page sends it (the models API's create request). */
export interface ModelRequest {
  modelName: string;
  matchPattern: string;
  startDate?: string | null;
  unit: string;
  pricingTiers: PricingTier[];
  tokenizerId?: string | null;
  tokenizerConfig?: unknown;
}

export const modelsApi = {
  models: (id: string) => call<{ data: ModelDefinition[] }>('GET', `${projectPath(id)}/models`),
  matchModel: (id: string, name: string) =>
    call<{ name: string; at: string; model: ModelDefinition | null }>(
      'GET',
      `${projectPath(id)}/models/match?${queryString({ name })}`,
    ),
  createModel: (id: string, body: ModelRequest) =>
    call<ModelDefinition>('POST', `${projectPath(id)}/models`, body),
  updateModel: (id: string, modelId: string, body: ModelRequest) =>
    call<ModelDefinition>('PUT', `${projectPath(id)}/models/${encodeURIComponent(modelId)}`, body),
  deleteModel: (id: string, modelId: string) =>
    call<{ message: string }>('DELETE', `${projectPath(id)}/models/${encodeURIComponent(modelId)}`),
};
