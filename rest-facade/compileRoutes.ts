import {
  Kind,
  parse,
  typeFromAST,
  validate,
  getNamedType,
  isEnumType,
  isNonNullType,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../kernel/pagination.js';
import type { RestRoute } from './routes/index.js';

export interface CompiledRoute extends RestRoute {
  /** Fastify path syntax (`:id`). */
  fastifyPath: string;
  /** `/{prefix}{path}`: the path under the edge's base path. */
  fullPath: string;
  operationName: string;
  operationNode: OperationDefinitionNode;
  rootField: string;
  pathParams: string[];
  /** Query parameter name → variable name and type. */
  queryParams: { name: string; variable: string; type: GraphQLInputType }[];
  variableTypes: Map<string, GraphQLInputType>;
}

const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * Parses and validates every persisted operation against the supergraph's API schema and checks
 * that the route's path, query and body names match the operation's variables. A broken route
 * stops start-up (and the test suite) instead of failing at request time.
 */
export function compileRoutes(routes: readonly RestRoute[], schema: GraphQLSchema): CompiledRoute[] {
  const problems: string[] = [];
  const compiled: CompiledRoute[] = [];
  for (const route of routes) {
    const where = `${route.method} /${route.prefix}${route.path}`;
    let document;
    try {
      document = parse(route.operation);
    } catch (error) {
      problems.push(`${where}: ${(error as Error).message}`);
      continue;
    }
    const errors = validate(schema, document);
    if (errors.length > 0) {
      problems.push(...errors.map((e) => `${where}: ${e.message}`));
      continue;
    }
    const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    const operation = operations[0];
    if (operations.length !== 1 || !operation?.name) {
      problems.push(`${where}: must hold exactly one named operation`);
      continue;
    }
    const rootFields = operation.selectionSet.selections.filter((s) => s.kind === Kind.FIELD);
    if (rootFields.length !== 1 || rootFields[0]?.kind !== Kind.FIELD) {
      problems.push(`${where}: must select exactly one root field`);
      continue;
    }
    const variableTypes = new Map<string, GraphQLInputType>();
    for (const definition of operation.variableDefinitions ?? []) {
      variableTypes.set(definition.variable.name.value, typeFromAST(schema, definition.type as never) as GraphQLInputType);
    }
    const pathParams = [...route.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
    const queryNames = [...(route.paginated ? ['limit', 'cursor'] : []), ...(route.query ?? [])];
    const queryParams = queryNames.map((name) => ({ name, variable: camel(name), type: variableTypes.get(camel(name))! }));
    for (const name of Object.keys(route.headerVariables ?? {})) if (!variableTypes.has(name)) problems.push(`${where}: header variable $${name} is not declared`);
    for (const name of pathParams) if (!variableTypes.has(name)) problems.push(`${where}: path parameter {${name}} has no variable $${name}`);
    for (const q of queryParams) if (!q.type) problems.push(`${where}: query parameter ${q.name} has no variable $${q.variable}`);
    if (route.body && !variableTypes.has(route.body)) problems.push(`${where}: body variable $${route.body} is not declared`);
    if (route.stream) {
      if (route.method !== 'GET') problems.push(`${where}: only GET routes can stream`);
      if (queryNames.includes(route.stream.param) || variableTypes.has(camel(route.stream.param))) problems.push(`${where}: stream parameter ${route.stream.param} must not also be a query parameter or variable`);
      for (const [, name] of route.stream.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)) {
        if (!pathParams.includes(name!)) problems.push(`${where}: stream path parameter {${name}} is not a parameter of the route's path`);
      }
    }
    for (const [name, type] of variableTypes) {
      const bound =
        !!route.variables || pathParams.includes(name) || queryParams.some((q) => q.variable === name) || route.body === name || route.bearerVariable === name || name in (route.headerVariables ?? {});
      if (!bound && isNonNullType(type)) problems.push(`${where}: required variable $${name} is not bound to the path, query, body or bearer token`);
    }
    compiled.push({
      ...route,
      fastifyPath: route.path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1'),
      fullPath: `/${route.prefix}${route.path}`,
      operationName: operation.name.value,
      operationNode: operation,
      rootField: (rootFields[0] as { alias?: { value: string }; name: { value: string } }).alias?.value ?? rootFields[0].name.value,
      pathParams,
      queryParams,
      variableTypes,
    });
  }
  const seen = new Set<string>();
  for (const r of compiled) {
    const key = `${r.method} ${r.fullPath}`;
    if (seen.has(key)) problems.push(`${key}: defined twice`);
    seen.add(key);
  }
  if (problems.length > 0) throw new Error(`REST route table is broken:\n  ${problems.join('\n  ')}`);
  return compiled;
}

/** Describes a query parameter's accepted values, for errors and for OpenAPI. */
export function describeQueryType(type: GraphQLInputType): { kind: 'integer' | 'boolean' | 'string'; values?: string[] } {
  const named = getNamedType(type);
  if (named.name === 'Int') return { kind: 'integer' };
  if (named.name === 'Boolean') return { kind: 'boolean' };
  if (isEnumType(named)) return { kind: 'string', values: named.getValues().map((v) => v.name) };
  return { kind: 'string' };
}

export const paginationDefaults = { defaultLimit: DEFAULT_PAGE_LIMIT, maxLimit: MAX_PAGE_LIMIT };
