import {
  Kind,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { listErrorCodes } from '../kernel/errors.js';
import { EVENT_TYPES, envelopeSchema } from '../kernel/event-catalogue.js';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../kernel/pagination.js';
import { toSnakeKey } from './casing.js';
import { describeQueryType, type CompiledRoute } from './compileRoutes.js';
import type { Prefix } from './routes/index.js';

type JsonSchema = Record<string, unknown>;

const PREFIX_TITLES: Record<Prefix, string> = {
  platform: 'platform-api: apps, CloudSpaces, clusters, webhooks, federation, onboarding, support',
  auth: 'auth-service: users, roles, tokens, API keys, OAuth',
  cicd: 'cicd-gateway: pipelines, runs, Git-host webhooks',
};

function scalarSchema(name: string): JsonSchema {
  switch (name) {
    case 'Int':
      return { type: 'integer' };
    case 'Float':
      return { type: 'number' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'DateTimeISO':
    case 'DateTime':
      return { type: 'string', format: 'date-time' };
    case 'ID':
      return { type: 'string' };
    default:
      return { type: 'string' };
  }
}

function nullable(schema: JsonSchema, isNullable: boolean): JsonSchema {
  if (!isNullable) return schema;
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  return { oneOf: [schema, { type: 'null' }] };
}

function outputSchema(type: GraphQLOutputType, selection: SelectionSetNode | undefined, schema: GraphQLSchema): JsonSchema {
  const isNullable = !isNonNullType(type);
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return nullable({ type: 'array', items: outputSchema(inner.ofType, selection, schema) }, isNullable);
  if (isEnumType(inner)) return nullable({ type: 'string', enum: inner.getValues().map((v) => v.name), ...(inner.description ? { description: inner.description } : {}) }, isNullable);
  if (isScalarType(inner)) return nullable(scalarSchema(inner.name), isNullable);
  if (isObjectType(inner) && selection) {
    const fields = inner.getFields();
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const node of selection.selections) {
      if (node.kind !== Kind.FIELD || node.name.value.startsWith('__')) continue;
      const field: GraphQLField<unknown, unknown> | undefined = fields[node.name.value];
      if (!field) continue;
      const key = toSnakeKey(node.alias?.value ?? node.name.value);
      const property = outputSchema(field.type, node.selectionSet, schema);
      properties[key] = field.description ? { ...property, description: field.description } : property;
      if (isNonNullType(field.type)) required.push(key);
    }
    return nullable({ type: 'object', properties, required, additionalProperties: false }, isNullable);
  }
  return {};
}

function inputSchema(type: GraphQLInputType): JsonSchema {
  const isNullable = !isNonNullType(type);
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return nullable({ type: 'array', items: inputSchema(inner.ofType) }, isNullable);
  if (isEnumType(inner)) return nullable({ type: 'string', enum: inner.getValues().map((v) => v.name) }, isNullable);
  if (isScalarType(inner)) return nullable(scalarSchema(inner.name), isNullable);
  if (isInputObjectType(inner)) {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const field of Object.values(inner.getFields())) {
      const key = toSnakeKey(field.name);
      const property = inputSchema(field.type);
      properties[key] = field.description ? { ...property, description: field.description } : property;
      if (isNonNullType(field.type) && field.defaultValue === undefined) required.push(key);
    }
    return { type: 'object', ...(inner.description ? { description: inner.description } : {}), properties, required, additionalProperties: false };
  }
  return {};
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthenticated',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Rate limited',
  500: 'Internal error',
  503: 'Unavailable',
};

/** Error responses by status, each listing the registry codes it may carry. */
function errorComponents(): { responses: Record<string, JsonSchema>; codes: string[] } {
  const byStatus = new Map<number, { code: string; description: string }[]>();
  for (const def of listErrorCodes()) byStatus.set(def.status, [...(byStatus.get(def.status) ?? []), def]);
  const responses: Record<string, JsonSchema> = {};
  for (const [status, defs] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[`Error${status}`] = {
      description: `${STATUS_TEXT[status] ?? 'Error'}. Codes: ${defs.map((d) => `\`${d.code}\` (${d.description})`).join('; ')}`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    };
  }
  return { responses, codes: listErrorCodes().map((d) => d.code) };
}

function errorRefs(route: CompiledRoute): Record<string, JsonSchema> {
  const statuses = new Set<number>([400, 500, 503]);
  if (route.auth !== 'public') statuses.add(401).add(403).add(429);
  if (route.pathParams.length > 0) statuses.add(404);
  if (route.body) statuses.add(413).add(415);
  // Writes can conflict with the current state; so can reads of an object that is not ready yet
  // (a CloudSpace still provisioning, an app not yet deployed).
  if (route.method !== 'GET' || route.pathParams.length > 0) statuses.add(409);
  statuses.add(405);
  return Object.fromEntries([...statuses].sort().map((s) => [String(s), { $ref: `#/components/responses/Error${s}` }]));
}

/**
 * The OpenAPI 3.1 document of the REST facade, generated from the route table and the
 * supergraph: request bodies from the GraphQL input types, responses from each persisted
 * operation's selection, error responses from the error-code registry.
 */
export function buildOpenApi(routes: readonly CompiledRoute[], schema: GraphQLSchema, options: { basePath?: string; prefix?: Prefix } = {}): JsonSchema {
  const selected = options.prefix ? routes.filter((r) => r.prefix === options.prefix) : routes;
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const usedIds = new Set<string>();
  for (const route of selected) {
    // The platform front door serves some operations of other services, and one operation may
    // back two paths (health aliases): qualify the id until it is unique, as OpenAPI requires.
    let operationId = `${route.prefix}.${route.operationName}`;
    if (usedIds.has(operationId)) operationId = `${operationId}.${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+/g, '_')}`;
    usedIds.add(operationId);
    const rootType = route.operationNode.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
    const rootNode = route.operationNode.selectionSet.selections.find((s) => s.kind === Kind.FIELD);
    const field = rootNode?.kind === Kind.FIELD ? rootType?.getFields()[rootNode.name.value] : undefined;
    const parameters: JsonSchema[] = route.pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    for (const q of route.queryParams) {
      const described = describeQueryType(q.type);
      const base: JsonSchema = { type: described.kind, ...(described.values ? { enum: described.values } : {}) };
      if (q.name === 'limit') Object.assign(base, { minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT });
      parameters.push({
        name: q.name,
        in: 'query',
        required: false,
        schema: base,
        ...(q.name === 'cursor' ? { description: 'Opaque cursor from the previous page\'s `next_cursor`.' } : {}),
        ...(q.name === 'limit' ? { description: `Page size (default ${DEFAULT_PAGE_LIMIT}, maximum ${MAX_PAGE_LIMIT}).` } : {}),
      });
    }
    if (route.stream) {
      parameters.push({
        name: route.stream.param,
        in: 'query',
        required: false,
        schema: { type: 'boolean', default: false },
        description: '`true`: stream the answer as `text/plain` while it is produced (chunked), until the client closes the connection.',
      });
    }
    const status = String(route.status ?? 200);
    const requirements = [route.role ? `role \`${route.role}\`` : '', route.scope ? `scope \`${route.scope}\`` : ''].filter(Boolean).join(' and ');
    const description = [route.description, requirements ? `Requires ${requirements}.` : ''].filter(Boolean).join(' ');
    const bodyMedia = route.form ? 'application/x-www-form-urlencoded' : 'application/json';
    const success = status === '204'
      ? { description: 'Done; no body.' }
      : {
          description: route.paginated ? 'One page: `data`, `next_cursor` (null on the last page) and `total`.' : 'Success.',
          content: {
            'application/json': { schema: field && rootNode?.kind === Kind.FIELD ? outputSchema(field.type, rootNode.selectionSet, schema) : {} },
            ...(route.stream ? { 'text/plain': { schema: { type: 'string', description: `With \`${route.stream.param}=true\`: the stream.` } } } : {}),
          },
        };
    const operation: JsonSchema = {
      operationId,
      summary: route.summary,
      ...(description ? { description } : {}),
      ...(route.scope ? { 'x-required-scope': route.scope } : {}),
      ...(route.role ? { 'x-required-role': route.role } : {}),
      tags: [route.prefix],
      ...(route.auth === 'public' ? { security: [] } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? { requestBody: { required: isNonNullType(route.variableTypes.get(route.body)!), content: { [bodyMedia]: { schema: inputSchema(route.variableTypes.get(route.body)!) } } } }
        : {}),
      responses: {
        [status]: success,
        ...errorRefs(route),
      },
      'x-graphql-operation': route.operationName,
    };
    const key = route.fullPath;
    paths[key] = { ...(paths[key] ?? {}), [route.method.toLowerCase()]: operation };
  }
  const { responses, codes } = errorComponents();
  // Outbound webhook events (spec 6) are platform-api's: in the whole document and platform's.
  const webhooks =
    options.prefix === undefined || options.prefix === 'platform'
      ? Object.fromEntries(
          Object.entries(EVENT_TYPES).map(([type, event]) => [
            type,
            {
              post: {
                summary: `${type}: ${event.description}`,
                description: 'Sent to subscribed HTTPS endpoints. Verify `Service-Signature` (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, 300 s tolerance) and acknowledge with any 2xx within 10 s; the event id is unique, deliveries may repeat.',
                parameters: [{ name: 'Service-Signature', in: 'header', required: true, schema: { type: 'string' } }],
                requestBody: { required: true, content: { 'application/json': { schema: envelopeSchema(type) } } },
                responses: { '200': { description: 'Any 2xx acknowledges the delivery.' } },
              },
            },
          ]),
        )
      : undefined;
  const title = options.prefix ? PREFIX_TITLES[options.prefix] : 'Cloud operations platform API';
  return {
    openapi: '3.1.0',
    info: {
      title,
      version: '1.0.0',
      description:
        'REST facade of the cloud operations platform. Every route maps onto one persisted GraphQL operation of the federated graph at `{base}/graphql`. ' +
        'Send `Authorization: Bearer <token>`. Errors use the envelope `{"error":{"code","message","request_id"}}`. ' +
        `Lists take \`limit\` (default ${DEFAULT_PAGE_LIMIT}, maximum ${MAX_PAGE_LIMIT}) and \`cursor\` and answer \`{data, next_cursor, total}\`.`,
    },
    servers: [{ url: options.basePath ?? '/api' }],
    tags: (options.prefix ? [options.prefix] : (Object.keys(PREFIX_TITLES) as Prefix[])).map((name) => ({ name, description: PREFIX_TITLES[name] })),
    security: [{ bearerAuth: [] }],
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    ...(webhooks ? { webhooks } : {}),
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: {
        ErrorEnvelope: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message', 'request_id'],
              properties: {
                code: { type: 'string', enum: codes },
                message: { type: 'string' },
                request_id: { type: 'string', description: 'Quote it when reporting a problem; also in the X-Request-Id header.' },
              },
            },
          },
        },
      },
      responses,
    },
  };
}
