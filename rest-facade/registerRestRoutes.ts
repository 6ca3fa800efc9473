import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ErrorCodes, resolveErrorCode } from '../kernel/errors.js';
import { sendError } from '../kernel/http.js';
import { MAX_PAGE_LIMIT } from '../kernel/pagination.js';
import type { Authenticator } from '../gateway/identity.js';
import type { EdgeContext, Gateway } from '../gateway/createGateway.js';
import { camelKeys, restInputMessage, snakeKeys } from './casing.js';
import { describeQueryType, type CompiledRoute } from './compileRoutes.js';
import type { HttpMethod } from './routes/index.js';

const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

function queryVariable(route: CompiledRoute, param: CompiledRoute['queryParams'][number], raw: unknown): unknown {
  const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  if (value === undefined || value === '') return undefined;
  const text = String(value);
  const { kind, values } = describeQueryType(param.type);
  if (kind === 'integer') {
    if (!/^-?\d{1,9}$/.test(text)) throw new AppError(ErrorCodes.validationFailed, `query parameter ${param.name} must be an integer`);
    const n = Number(text);
    if (param.name === 'limit' && route.paginated && (n < 1 || n > MAX_PAGE_LIMIT)) {
      throw new AppError(ErrorCodes.validationFailed, `limit must be between 1 and ${MAX_PAGE_LIMIT}`);
    }
    return n;
  }
  if (kind === 'boolean') {
    if (text !== 'true' && text !== 'false') throw new AppError(ErrorCodes.validationFailed, `query parameter ${param.name} must be true or false`);
    return text === 'true';
  }
  if (values && !values.includes(text)) {
    throw new AppError(ErrorCodes.validationFailed, `query parameter ${param.name} must be one of ${values.join(', ')}`);
  }
  return text;
}

function variablesFor(route: CompiledRoute, request: FastifyRequest): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  const params = request.params as Record<string, string>;
  for (const name of route.pathParams) variables[name] = params[name];
  const query = (request.query ?? {}) as Record<string, unknown>;
  for (const param of route.queryParams) {
    const value = queryVariable(route, param, query[param.name]);
    if (value !== undefined) variables[param.variable] = value;
  }
  if (route.body) {
    const body = request.body;
    if (body === undefined || body === null) throw new AppError(ErrorCodes.badRequest, 'request body is required (a JSON object)');
    if (typeof body !== 'object' || Array.isArray(body)) throw new AppError(ErrorCodes.badRequest, 'request body must be a JSON object');
    variables[route.body] = camelKeys(body);
  }
  return variables;
}

/**
 * Registers every compiled route on the edge. One request: authenticate → variables → the
 * persisted operation through the gateway → the root field in snake_case, or the error envelope
 * with the status the registry gives the first error's code. Paths that exist answer other
 * methods with 405 and an Allow header.
 */
export function registerRestRoutes(
  app: FastifyInstance,
  options: { basePath: string; routes: CompiledRoute[]; gateway: Gateway; authenticator: Authenticator },
): void {
  const { gateway, authenticator } = options;

  for (const route of options.routes) {
    const url = `${options.basePath}/${route.prefix}${route.fastifyPath}`;
    app.route({
      method: route.method,
      url,
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const identity = await authenticator.authenticate(request);
        if (!identity && route.auth !== 'public') throw new AppError(ErrorCodes.unauthenticated, 'authentication required: send Authorization: Bearer <token>');
        const variables = variablesFor(route, request);
        const contextValue: EdgeContext = {
          identity,
          requestId: request.id,
          ...(identity ? { internalToken: await authenticator.internalTokenFor(identity) } : {}),
        };
        const response = await gateway.server.executeOperation({ query: route.operation, operationName: route.operationName, variables }, { contextValue });
        if (response.body.kind !== 'single') throw new AppError(ErrorCodes.internal);
        const { data, errors } = response.body.singleResult;
        if (errors && errors.length > 0) {
          const first = errors[0]!;
          const definition = resolveErrorCode(first.extensions?.code);
          const message = definition === ErrorCodes.validationFailed ? restInputMessage(first.message, route.body) : first.message;
          return sendError(reply, definition, message);
        }
        const result = (data as Record<string, unknown> | null | undefined)?.[route.rootField] as Record<string, unknown> | null;
        if (result === null || result === undefined) throw new AppError(ErrorCodes.internal);
        const degraded = route.degraded?.(result);
        if (degraded) return sendError(reply, ErrorCodes.unavailable, degraded);
        return reply.status(route.status ?? 200).send(snakeKeys(result));
      },
    });
  }

  // 405 for known paths with an unknown method.
  const byPath = new Map<string, Set<HttpMethod>>();
  for (const route of options.routes) {
    const url = `${options.basePath}/${route.prefix}${route.fastifyPath}`;
    byPath.set(url, (byPath.get(url) ?? new Set()).add(route.method));
  }
  for (const [url, methods] of byPath) {
    const allow = [...methods, ...(methods.has('GET') ? ['HEAD'] : [])].join(', ');
    const missing = METHODS.filter((m) => !methods.has(m));
    if (missing.length === 0) continue;
    app.route({
      method: missing,
      url,
      handler: async (request, reply) => {
        reply.header('allow', allow);
        return sendError(reply, ErrorCodes.methodNotAllowed, `${request.method} is not allowed here; use ${allow}`);
      },
    });
  }
}
