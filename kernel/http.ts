import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { WebSocketServer } from 'ws';
import { AppError, ErrorCodes, resolveErrorCode, type ErrorCodeDefinition } from './errors.js';
import type { Logger } from './logger.js';

/** A client-supplied request id is kept only when it is short and plain. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@\-]{1,128}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && SANE_REQUEST_ID.test(value) ? value : randomUUID();
}

export interface ErrorEnvelope {
  error: { code: string; message: string; request_id: string };
}

export function errorEnvelope(code: string, message: string, requestId: string): ErrorEnvelope {
  return { error: { code, message, request_id: requestId } };
}

/** Sends the spec's error envelope with the status the registry gives the code. */
export function sendError(reply: FastifyReply, definition: ErrorCodeDefinition, message?: string): FastifyReply {
  return reply
    .status(definition.status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(errorEnvelope(definition.code, message ?? definition.description, reply.request.id));
}

/** Translates what Fastify and its body parser throw into the registry. */
function classify(error: Error & { code?: string; statusCode?: number; validation?: unknown }): { definition: ErrorCodeDefinition; message: string } {
  if (error instanceof AppError) return { definition: error.definition, message: error.message };
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { definition: ErrorCodes.payloadTooLarge, message: 'request body is larger than the limit' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { definition: ErrorCodes.unsupportedMediaType, message: 'request body must be JSON (Content-Type: application/json)' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { definition: ErrorCodes.badRequest, message: 'request body is empty but Content-Type says JSON' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { definition: ErrorCodes.badRequest, message: 'request body is not valid JSON' };
    default:
      break;
  }
  if (error instanceof SyntaxError || error.code?.startsWith('FST_ERR_CTP')) {
    return { definition: ErrorCodes.badRequest, message: 'request body is not valid JSON' };
  }
  if (error.validation) return { definition: ErrorCodes.validationFailed, message: error.message };
  if (error.statusCode === 413) return { definition: ErrorCodes.payloadTooLarge, message: 'request body is larger than the limit' };
  if (error.statusCode === 415) return { definition: ErrorCodes.unsupportedMediaType, message: error.message };
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return { definition: ErrorCodes.badRequest, message: error.message };
  }
  return { definition: resolveErrorCode(error.code), message: ErrorCodes.internal.description };
}

export interface HttpServerOptions {
  logger: Logger;
  bodyLimitBytes?: number;
  /** Proxies trusted for the client address (Fastify's trustProxy). */
  trustProxy?: boolean | number | string;
}

/**
 * The HTTP server every process stands on: request ids (accepted when sane, generated
 * otherwise, always returned in `X-Request-Id`), the error envelope for everything that fails
 * before or inside a route, and a JSON body parser that keeps the raw body for signature checks.
 */
export function createHttpServer(options: HttpServerOptions): FastifyInstance {
  const app: FastifyInstance = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    bodyLimit: options.bodyLimitBytes ?? 1024 * 1024,
    // A string is a list of trusted addresses or CIDRs.
    trustProxy: (options.trustProxy ?? false) as boolean,
    // Request lines are logged by our onResponse hook, with the request id as `request_id`.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']),
    return503OnClosing: true,
    // On close, idle keep-alive connections are dropped and requests in flight finish.
    forceCloseConnections: 'idle',
    keepAliveTimeout: 72_000,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode >= 500) request.log.warn({ method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime }, 'request failed');
    else request.log.debug({ method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime }, 'request');
  });

  app.setErrorHandler((error: Error & { code?: string; statusCode?: number }, request, reply) => {
    const { definition, message } = classify(error);
    if (definition.status >= 500) request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, definition, message);
  });

  app.setNotFoundHandler((request, reply) => sendError(reply, ErrorCodes.notFound, `no route for ${request.method} ${request.url.split('?')[0]}`));

  return app;
}

export interface HealthCheck {
  name: string;
  check(): Promise<boolean>;
}

/**
 * Liveness (`/healthz`, `/health`: the process answers) and readiness (`/readyz`: its
 * dependencies answer) for orchestrators. Readiness failures answer 503 with the envelope.
 */
export function registerHealthRoutes(app: FastifyInstance, service: string, checks: HealthCheck[], prefix = ''): void {
  const live = async () => ({ status: 'ok', service });
  app.get(`${prefix}/healthz`, live);
  app.get(`${prefix}/health`, live);
  app.get(`${prefix}/readyz`, async (_request: FastifyRequest, reply: FastifyReply) => {
    const results = await Promise.all(checks.map(async (c) => [c.name, await c.check().catch(() => false)] as const));
    const failing = results.filter(([, ok]) => !ok).map(([name]) => name);
    if (failing.length > 0) return sendError(reply, ErrorCodes.unavailable, `not ready: ${failing.join(', ')} unavailable`);
    return { status: 'ok', service, checks: Object.fromEntries(results) };
  });
}

/** A WebSocket server for upgrades of `path` on the HTTP server; other upgrades are refused. */
export function webSocketServerAt(app: FastifyInstance, path: string): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true });
  app.server.on('upgrade', (request, socket, head) => {
    if (request.url?.split('?')[0] !== path) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  });
  return wss;
}
