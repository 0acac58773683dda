/**
 * The unstable evaluation API's error envelope `{message, code, details?}` (the reference's
 * `PublicApiError`): SDKs and agents branch on `code`. Pure: no I/O.
 */
import { HttpError } from '../errors.ts';

export type PublicApiErrorCode =
  | 'invalid_body'
  | 'invalid_query'
  | 'invalid_filter_value'
  | 'invalid_json_path'
  | 'invalid_variable_mapping'
  | 'missing_variable_mapping'
  | 'duplicate_variable_mapping'
  | 'resource_not_found'
  | 'name_conflict'
  | 'evaluator_preflight_failed'
  | 'conflict'
  | 'unprocessable_content';

export interface PublicApiErrorDetails {
  issues?: { code: string; message: string; path: (string | number)[] }[];
  field?: string;
  column?: string;
  invalidValues?: string[];
  allowedValues?: string[];
  variable?: string;
  variables?: string[];
  value?: string;
  evaluatorName?: string;
  provider?: string | null;
  model?: string | null;
  limit?: number;
}

const STATUS: Record<PublicApiErrorCode, number> = {
  invalid_body: 400,
  invalid_query: 400,
  invalid_filter_value: 400,
  invalid_json_path: 400,
  invalid_variable_mapping: 400,
  missing_variable_mapping: 400,
  duplicate_variable_mapping: 400,
  resource_not_found: 404,
  name_conflict: 409,
  conflict: 409,
  evaluator_preflight_failed: 422,
  unprocessable_content: 422,
};

export class PublicApiError extends HttpError {
  override name = 'PublicApiError';
  readonly code: PublicApiErrorCode;
  readonly apiDetails: PublicApiErrorDetails | undefined;
  constructor(code: PublicApiErrorCode, message: string, details?: PublicApiErrorDetails) {
    super(STATUS[code], message);
    this.code = code;
    this.apiDetails = details;
  }
}

/** The envelope of any error raised under the unstable routes (evaluation, dashboards). */
export function envelopeOf(err: HttpError): {
  message: string;
  code: string;
  details?: PublicApiErrorDetails;
} {
  if (err instanceof PublicApiError)
    return { message: err.message, code: err.code, ...(err.apiDetails ? { details: err.apiDetails } : {}) };
  const code =
    err.statusCode === 404 ? 'resource_not_found' : err.statusCode === 409 ? 'conflict' : 'invalid_body';
  return { message: err.details ? `${err.message}: ${err.details}` : err.message, code };
}
