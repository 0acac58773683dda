/**
 * The unstable evaluation API's error envelope `{message, code, details?}` (the reference's
 * `PublicApiError`): SDKs and agents branch on `code`. Pure: no I/O.
 */
import { HttpError, InvalidRequestPart, type ValidationIssue } from '../../kernel/errors.ts';

export type PublicApiErrorCode =
  | 'authentication_failed'
  | 'access_denied'
  | 'invalid_request'
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
  | 'unprocessable_content'
  | 'rate_limited'
  | 'method_not_allowed'
  | 'internal_error';

export interface PublicApiErrorDetails {
  issues?: ValidationIssue[];
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
  authentication_failed: 401,
  access_denied: 403,
  invalid_request: 400,
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
  rate_limited: 429,
  method_not_allowed: 405,
  internal_error: 500,
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

/** The code of an error without one of its own, by its status as the reference's envelope gives it. */
function codeOfStatus(status: number, hasBody: boolean): PublicApiErrorCode {
  switch (status) {
    case 400:
      // A check the handler makes after parsing (a field against another) is about the body it read.
      return hasBody ? 'invalid_body' : 'invalid_request';
    case 401:
      return 'authentication_failed';
    case 403:
      return 'access_denied';
    case 404:
      return 'resource_not_found';
    case 405:
      return 'method_not_allowed';
    case 409:
      return 'conflict';
    case 422:
      return 'unprocessable_content';
    case 429:
      return 'rate_limited';
    default:
      return status >= 500 ? 'internal_error' : 'invalid_request';
  }
}

const PART: Record<InvalidRequestPart['part'], { code: PublicApiErrorCode; message: string }> = {
  query: { code: 'invalid_query', message: 'Invalid query parameters' },
  body: { code: 'invalid_body', message: 'Invalid request body' },
  params: { code: 'invalid_request', message: 'Invalid path parameters' },
};

export interface Envelope {
  message: string;
  code: PublicApiErrorCode;
  details?: PublicApiErrorDetails;
}

/**
 * The envelope of any error raised under the unstable routes (evaluation, dashboards, alerts):
 * a request part that does not parse lists its issues; `hasBody` says whether the request sent one.
 */
export function envelopeOf(err: HttpError, hasBody: boolean): Envelope {
  if (err instanceof PublicApiError)
    return { message: err.message, code: err.code, ...(err.apiDetails ? { details: err.apiDetails } : {}) };
  if (err instanceof InvalidRequestPart) {
    const { code, message } = PART[err.part];
    return { message: `${message}: ${err.details}`, code, details: { issues: err.issues } };
  }
  return {
    message: err.details ? `${err.message}: ${err.details}` : err.message,
    code: codeOfStatus(err.statusCode, hasBody),
  };
}
