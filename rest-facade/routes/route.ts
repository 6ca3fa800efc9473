/** The gateway prefixes of spec part 1 served by this product's subgraphs. */
export type Prefix = 'platform' | 'auth' | 'cicd';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * One REST route of the facade, mapped onto one persisted GraphQL operation.
 *
 * - Path parameters (`{id}`) become the variables of the same name.
 * - `query` names the query-string parameters the route accepts; each becomes the variable of
 *   the same name in camelCase and is converted to that variable's GraphQL type.
 * - `body` names the variable that receives the JSON body (keys converted to camelCase).
 * - `paginated` adds `limit` and `cursor` and answers with the pagination envelope.
 * - The response is the operation's single root field with keys in snake_case.
 */
export interface RestRoute {
  prefix: Prefix;
  method: HttpMethod;
  /** Service path as in the spec, with `{param}` placeholders. */
  path: string;
  summary: string;
  description?: string;
  /** One named GraphQL operation; validated against the supergraph at start-up. */
  operation: string;
  /** `public` routes answer anonymous callers; every other route needs a credential. */
  auth?: 'public';
  query?: readonly string[];
  body?: string;
  paginated?: boolean;
  /** Status of a successful answer; default 200. */
  status?: number;
  /** A reason to answer 503 `service_unavailable` instead of the result (health checks). */
  degraded?: (result: Record<string, unknown>) => string | undefined;
}
