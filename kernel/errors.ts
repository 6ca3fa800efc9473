import { GraphQLError } from 'graphql';

/**
 * The error-code registry. Every code the platform can answer with is defined here once, with
 * its HTTP status and a description. Subgraphs throw {@link AppError}s carrying the code in
 * `extensions.code`; the REST facade maps the code to the status and the spec's envelope
 * `{"error":{"code","message","request_id"}}`; the OpenAPI error components are generated from
 * this table, so the documentation cannot drift from the behaviour.
 */
export interface ErrorCodeDefinition {
  readonly code: string;
  readonly status: number;
  readonly description: string;
}

const registry = new Map<string, ErrorCodeDefinition>();

function defineError(code: string, status: number, description: string): ErrorCodeDefinition {
  if (registry.has(code)) throw new Error(`error code ${code} defined twice`);
  const definition = Object.freeze({ code, status, description });
  registry.set(code, definition);
  return definition;
}

export const ErrorCodes = {
  badRequest: defineError('bad_request', 400, 'The request is malformed: for example a body that is not valid JSON, or a header that is not understood.'),
  validationFailed: defineError('validation_failed', 400, 'A field of the request is missing, has the wrong type or is outside its allowed values; the message names it.'),
  invalidCursor: defineError('invalid_cursor', 400, 'The pagination cursor was not produced by this API for this list, or has been altered.'),
  unauthenticated: defineError('unauthenticated', 401, 'Credentials are missing, malformed, expired or not accepted.'),
  forbidden: defineError('forbidden', 403, 'The credentials are valid but lack the scope or role this operation needs.'),
  notFound: defineError('not_found', 404, 'The resource does not exist or belongs to another tenant.'),
  methodNotAllowed: defineError('method_not_allowed', 405, 'The path exists but does not accept this HTTP method; the Allow header lists those it does.'),
  notAcceptable: defineError('not_acceptable', 406, 'The response cannot be produced in a media type the client accepts.'),
  conflict: defineError('conflict', 409, 'The request conflicts with the current state of the resource.'),
  invalidTransition: defineError('invalid_transition', 409, 'The requested status change is not allowed from the resource\'s current status.'),
  payloadTooLarge: defineError('payload_too_large', 413, 'The request body is larger than the configured limit.'),
  unsupportedMediaType: defineError('unsupported_media_type', 415, 'The request body is not in a media type this route accepts (JSON unless documented otherwise).'),
  queryTooComplex: defineError('query_too_complex', 400, 'The GraphQL operation exceeds the depth, alias or cost limit.'),
  rateLimited: defineError('rate_limited', 429, 'The request budget is exhausted; retry after the number of seconds in Retry-After.'),
  // RFC 6749 names, used as codes on the OAuth token endpoint.
  oauthInvalidRequest: defineError('invalid_request', 400, 'OAuth 2.0: a required parameter is missing or repeated, or the request is malformed.'),
  oauthInvalidClient: defineError('invalid_client', 401, 'OAuth 2.0: client authentication failed (unknown client, wrong secret, or disabled account).'),
  oauthInvalidScope: defineError('invalid_scope', 400, 'OAuth 2.0: a requested scope is unknown or outside what the client may use.'),
  oauthUnsupportedGrantType: defineError('unsupported_grant_type', 400, 'OAuth 2.0: only grant_type=client_credentials is supported.'),
  internal: defineError('internal_error', 500, 'An unexpected error; quote the request_id when reporting it.'),
  upstreamUnavailable: defineError('upstream_unavailable', 503, 'A service this request needs is not configured or not reachable.'),
  unavailable: defineError('service_unavailable', 503, 'The service is starting, stopping or lacks a dependency such as its database.'),
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes]['code'];

/** Every registered code, in definition order. */
export function listErrorCodes(): ErrorCodeDefinition[] {
  return [...registry.values()];
}

export function lookupErrorCode(code: string | undefined): ErrorCodeDefinition | undefined {
  return code === undefined ? undefined : registry.get(code);
}

/**
 * Codes produced by GraphQL libraries themselves (Apollo Server, graphql-js, the gateway),
 * translated to ours so clients see one vocabulary on every path.
 */
const foreignCodes: Record<string, ErrorCodeDefinition> = {
  GRAPHQL_PARSE_FAILED: ErrorCodes.badRequest,
  GRAPHQL_VALIDATION_FAILED: ErrorCodes.validationFailed,
  BAD_USER_INPUT: ErrorCodes.validationFailed,
  BAD_REQUEST: ErrorCodes.badRequest,
  PERSISTED_QUERY_NOT_FOUND: ErrorCodes.badRequest,
  PERSISTED_QUERY_NOT_SUPPORTED: ErrorCodes.badRequest,
  OPERATION_RESOLUTION_FAILURE: ErrorCodes.badRequest,
  UNAUTHENTICATED: ErrorCodes.unauthenticated,
  FORBIDDEN: ErrorCodes.forbidden,
  INTERNAL_SERVER_ERROR: ErrorCodes.internal,
};

/** Maps any `extensions.code` (ours or a library's) to a registry entry; unknown codes are internal. */
export function resolveErrorCode(code: unknown): ErrorCodeDefinition {
  if (typeof code !== 'string') return ErrorCodes.internal;
  return registry.get(code) ?? foreignCodes[code] ?? ErrorCodes.internal;
}

/**
 * The one error type services throw. It is a GraphQLError so it travels through subgraphs and
 * the gateway unchanged, with the registry code in `extensions.code`.
 */
export class AppError extends GraphQLError {
  readonly definition: ErrorCodeDefinition;

  constructor(definition: ErrorCodeDefinition, message?: string, extra?: Record<string, unknown>) {
    super(message ?? definition.description, { extensions: { ...extra, code: definition.code } });
    this.definition = definition;
  }

  get status(): number {
    return this.definition.status;
  }
}

export const notFound = (what: string): AppError => new AppError(ErrorCodes.notFound, `${what} not found`);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a canonical UUID; ids that are not UUIDs can only be `not_found`. */
export const isUuid = (value: string): boolean => UUID.test(value);
