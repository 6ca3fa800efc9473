import type { FastifyRequest } from 'fastify';
import type { Scope } from '../../kernel/identity.js';

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
  /** Scope the credential must carry; checked at the edge before the operation runs (spec 5.3). */
  scope?: Scope;
  /** Role the caller must hold (`admin`, `super_admin`, `service_account`). */
  role?: string;
  /**
   * `none`: the edge does not authenticate the Authorization header for this route (the
   * operation itself reads it: token introspection, the OAuth token endpoint).
   */
  credentials?: 'none';
  /** Passes the raw bearer token of the request as this variable (token introspection). */
  bearerVariable?: string;
  /** The body is an HTML form (`application/x-www-form-urlencoded`), as OAuth 2.0 requires. */
  form?: { basicClientAuth: boolean };
  /** Drop null members from the answer (RFC 7662: an inactive token is only `{"active": false}`). */
  omitNulls?: boolean;
  /** The answer holds secrets: `Cache-Control: no-store` (RFC 6749 section 5.1). */
  noStore?: boolean;
  /** A successful call ends the caller's session at this edge at once (logout). */
  endsSession?: boolean;
  /** Variables taken from request headers: variable → header names, the first present wins. */
  headerVariables?: Record<string, string[]>;
  /** The route needs the raw request body (signature checks): JSON is not re-serialised. */
  rawBody?: boolean;
  /** Builds the variables itself (webhooks); path, query and body rules then do not apply. */
  variables?: (request: FastifyRequest) => Record<string, unknown>;
  query?: readonly string[];
  body?: string;
  paginated?: boolean;
  /** Status of a successful answer; default 200. 204 answers no body. */
  status?: number;
  /** A reason to answer 503 `service_unavailable` instead of the result (health checks). */
  degraded?: (result: Record<string, unknown>) => string | undefined;
  /**
   * The route also streams (followed logs), which GraphQL cannot: when the boolean query
   * parameter `param` is `true`, the edge authorizes and checks the other query parameters as
   * usual, then proxies the GET to `path` (`{param}` placeholders as in `path` above) on the
   * subgraph's own HTTP server with an internal token carrying the caller's identity, and pipes
   * the answer back as it arrives (`text/plain`). Errors before the stream starts are the
   * subgraph's envelope; the upstream request closes when the client goes.
   */
  stream?: { param: string; subgraph: Prefix; path: string };
}
