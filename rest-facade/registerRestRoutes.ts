import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getNamedType, isInputObjectType, isNonNullType } from 'graphql';
import { request as undiciRequest, type Dispatcher } from 'undici';
import { AppError, ErrorCodes, resolveErrorCode } from '../kernel/errors.js';
import { sendError } from '../kernel/http.js';
import { bearerToken, hasRole, hasScope, type Identity } from '../kernel/identity.js';
import { MAX_PAGE_LIMIT } from '../kernel/pagination.js';
import type { Authenticator } from '../gateway/identity.js';
import type { EdgeContext, Gateway } from '../gateway/createGateway.js';
import { camelKeys, restInputMessage, snakeKeys } from './casing.js';
import { describeQueryType, type CompiledRoute } from './compileRoutes.js';
import type { HttpMethod, Prefix } from './routes/index.js';

const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller, set by the edge's onRequest hook (null: anonymous). */
    identity: Identity | null;
  }
  interface FastifyContextConfig {
    /** `none`: the edge does not authenticate the Authorization header. */
    credentials?: 'none';
    /** The GraphQL endpoint answers authentication failures in GraphQL's shape too. */
    graphql?: boolean;
  }
  interface FastifyRequest {
    /** The request body exactly as received (JSON bodies), for signature checks. */
    rawBody?: string;
  }
}

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

/** RFC 6749 section 2.3.1: client credentials in HTTP Basic, each form-urlencoded first. */
function basicClientCredentials(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header?.trim() ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new AppError(ErrorCodes.oauthInvalidClient, 'malformed HTTP Basic credentials');
  const unescape = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  return { clientId: unescape(decoded.slice(0, colon)), clientSecret: unescape(decoded.slice(colon + 1)) };
}

function bodyVariable(route: CompiledRoute, request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  if (route.form) {
    if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      throw new AppError(ErrorCodes.oauthInvalidRequest, 'the body must be application/x-www-form-urlencoded');
    }
    const fields = { ...(body as Record<string, string>) };
    if (route.form.basicClientAuth) {
      const basic = basicClientCredentials(request.headers.authorization);
      if (basic) {
        if (fields.client_secret !== undefined) throw new AppError(ErrorCodes.oauthInvalidRequest, 'send the client secret either in HTTP Basic or in the body, not both');
        if (fields.client_id !== undefined && fields.client_id !== basic.clientId) throw new AppError(ErrorCodes.oauthInvalidRequest, 'client_id in the body differs from HTTP Basic');
        fields.client_id = basic.clientId;
        fields.client_secret = basic.clientSecret;
      }
    }
    // RFC 6749 section 3.2: parameters the endpoint does not know are ignored.
    const known = getNamedType(route.variableTypes.get(route.body!)!);
    const allowed = isInputObjectType(known) ? new Set(Object.keys(known.getFields())) : new Set<string>();
    return Object.fromEntries(Object.entries(camelKeys(fields) as Record<string, unknown>).filter(([key]) => allowed.has(key)));
  }
  const type = request.headers['content-type'];
  if (type !== undefined && !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
    throw new AppError(ErrorCodes.unsupportedMediaType, 'request body must be JSON (Content-Type: application/json)');
  }
  if (body === undefined || body === null) throw new AppError(ErrorCodes.badRequest, 'request body is required (a JSON object)');
  if (typeof body !== 'object' || Array.isArray(body)) throw new AppError(ErrorCodes.badRequest, 'request body must be a JSON object');
  return camelKeys(body) as Record<string, unknown>;
}

function variablesFor(route: CompiledRoute, request: FastifyRequest): Record<string, unknown> {
  if (route.variables) return route.variables(request);
  const variables: Record<string, unknown> = {};
  const params = request.params as Record<string, string>;
  for (const name of route.pathParams) variables[name] = params[name];
  const query = (request.query ?? {}) as Record<string, unknown>;
  for (const param of route.queryParams) {
    const value = queryVariable(route, param, query[param.name]);
    if (value !== undefined) variables[param.variable] = value;
  }
  if (route.body) {
    // A body bound to an optional variable may be left out (e.g. rotate-secret's options).
    const optional = !isNonNullType(route.variableTypes.get(route.body));
    if (!(optional && (request.body === undefined || request.body === null))) variables[route.body] = bodyVariable(route, request);
  }
  if (route.bearerVariable) variables[route.bearerVariable] = bearerToken(request.headers.authorization) ?? '';
  for (const [variable, names] of Object.entries(route.headerVariables ?? {})) {
    const value = names.map((n) => request.headers[n]).find((v): v is string => typeof v === 'string');
    variables[variable] = value ?? '';
  }
  return variables;
}

function authorize(route: CompiledRoute, identity: Identity | null): void {
  if (route.auth === 'public') return;
  if (!identity) throw new AppError(ErrorCodes.unauthenticated, 'authentication required: send Authorization: Bearer <token>');
  if (route.role && !hasRole(identity, route.role)) throw new AppError(ErrorCodes.forbidden, `role "${route.role}" required`);
  if (route.scope && !hasScope(identity, route.scope)) throw new AppError(ErrorCodes.forbidden, `scope "${route.scope}" required`);
}

/** Whether a streaming route was asked to stream (`?follow=true`). */
function streamRequested(route: CompiledRoute, request: FastifyRequest): boolean {
  if (!route.stream) return false;
  const raw = (request.query as Record<string, unknown> | undefined)?.[route.stream.param];
  const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw new AppError(ErrorCodes.validationFailed, `query parameter ${route.stream.param} must be true or false`);
}

/**
 * Proxies a streaming GET to the subgraph's private route, as the caller (the internal token)
 * and with the request's id, and pipes the answer back unbuffered. Before the stream starts, the
 * subgraph's error envelope becomes this answer; a client leaving closes the upstream request
 * (before the answer starts through the abort signal, after it through Fastify destroying the
 * body it pipes).
 */
async function proxyStream(route: CompiledRoute, request: FastifyRequest, reply: FastifyReply, base: string, internalToken: string | undefined): Promise<FastifyReply> {
  const params = request.params as Record<string, string>;
  const path = route.stream!.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
  const abort = new AbortController();
  const onClose = () => abort.abort();
  reply.raw.once('close', onClose);
  let upstream: Dispatcher.ResponseData;
  try {
    upstream = await undiciRequest(`${base}${path}${query}`, {
      method: 'GET',
      headers: { 'x-request-id': request.id, accept: 'text/plain', ...(internalToken ? { authorization: `Bearer ${internalToken}` } : {}) },
      signal: abort.signal,
      headersTimeout: 30_000,
      // A followed log may be quiet for a long time.
      bodyTimeout: 0,
    });
  } catch (error) {
    // An abort is the client having gone: nobody is left to answer.
    if (!abort.signal.aborted) request.log.warn({ err: error, path }, 'streaming upstream unreachable');
    throw new AppError(ErrorCodes.upstreamUnavailable, 'a service needed for this request is not reachable');
  } finally {
    reply.raw.off('close', onClose);
  }
  if (upstream.statusCode !== 200) {
    const text = await upstream.body.text().catch(() => '');
    let envelope: { error?: { code?: unknown; message?: unknown } } | undefined;
    try {
      envelope = JSON.parse(text) as typeof envelope;
    } catch {
      envelope = undefined;
    }
    const code = envelope?.error?.code;
    if (typeof code !== 'string') throw new AppError(ErrorCodes.upstreamUnavailable, 'a service needed for this request answered an error');
    return sendError(reply, resolveErrorCode(code), typeof envelope?.error?.message === 'string' ? envelope.error.message : undefined);
  }
  return reply.header('content-type', 'text/plain; charset=utf-8').header('cache-control', 'no-store').header('x-content-type-options', 'nosniff').send(upstream.body);
}

function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
}

/**
 * Registers every compiled route on the edge. One request: authorize the identity the edge's
 * hook established → variables → the persisted operation through the gateway → the root field
 * in snake_case, or the error envelope with the status the registry gives the first error's
 * code. A streaming route asked to stream is proxied to its subgraph instead, after the same
 * authorization and parameter checks. Paths that exist answer other methods with 405 and an
 * Allow header.
 */
export function registerRestRoutes(
  app: FastifyInstance,
  options: {
    basePath: string;
    routes: CompiledRoute[];
    gateway: Gateway;
    authenticator: Authenticator;
    /** GraphQL endpoints of the subgraphs; streaming routes go to their HTTP servers. */
    subgraphUrls: Record<Prefix, string>;
  },
): void {
  const { gateway, authenticator } = options;
  const urlOf = (route: CompiledRoute) => `${options.basePath}/${route.prefix}${route.fastifyPath}`;

  for (const route of options.routes) {
    app.route({
      method: route.method,
      url: urlOf(route),
      config: route.credentials === 'none' ? { credentials: 'none' } : {},
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const { identity } = request;
        authorize(route, identity);
        const variables = variablesFor(route, request);
        // HEAD answers the headers of the JSON answer: a followed stream has no end to wait for.
        if (request.method === 'GET' && streamRequested(route, request)) {
          const base = options.subgraphUrls[route.stream!.subgraph].replace(/\/graphql$/, '');
          return proxyStream(route, request, reply, base, identity ? await authenticator.internalTokenFor(identity) : undefined);
        }
        const contextValue: EdgeContext = {
          identity,
          requestId: request.id,
          ...(identity ? { internalToken: await authenticator.internalTokenFor(identity) } : {}),
        };
        const response = await gateway.server.executeOperation({ query: route.operation, operationName: route.operationName, variables }, { contextValue });
        if (response.body.kind !== 'single') throw new AppError(ErrorCodes.internal);
        const { data, errors } = response.body.singleResult;
        if (route.noStore) reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
        if (errors && errors.length > 0) {
          const first = errors[0]!;
          const definition = resolveErrorCode(first.extensions?.code);
          const retryAfter = first.extensions?.retryAfter;
          if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
          const message = definition === ErrorCodes.validationFailed ? restInputMessage(first.message, route.body) : first.message;
          return sendError(reply, definition, message);
        }
        const result = (data as Record<string, unknown> | null | undefined)?.[route.rootField] as Record<string, unknown> | null;
        if (result === null || result === undefined) throw new AppError(ErrorCodes.internal);
        const degraded = route.degraded?.(result);
        if (degraded) return sendError(reply, ErrorCodes.unavailable, degraded);
        if (route.endsSession && identity?.sessionId) authenticator.revokeSession(identity.sessionId);
        const status = route.status ?? 200;
        if (status === 204) return reply.status(204).send();
        const body = snakeKeys(result) as Record<string, unknown>;
        return reply.status(status).send(route.omitNulls ? withoutNulls(body) : body);
      },
    });
  }

  // 405 for known paths with an unknown method.
  const byPath = new Map<string, Set<HttpMethod>>();
  for (const route of options.routes) byPath.set(urlOf(route), (byPath.get(urlOf(route)) ?? new Set()).add(route.method));
  for (const [url, methods] of byPath) {
    const allow = [...methods, ...(methods.has('GET') ? ['HEAD'] : [])].join(', ');
    const missing = METHODS.filter((m) => !methods.has(m));
    if (missing.length === 0) continue;
    app.route({
      method: missing,
      url,
      config: { credentials: 'none' },
      handler: async (request, reply) => {
        reply.header('allow', allow);
        return sendError(reply, ErrorCodes.methodNotAllowed, `${request.method} is not allowed here; use ${allow}`);
      },
    });
  }
}
