import { HeaderMap, type ApolloServer, type BaseContext } from '@apollo/server';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Runs one HTTP request through Apollo Server's transport-neutral entry point and writes the
 * answer to Fastify's reply. Used by the subgraphs and by the edge's `/graphql`.
 */
export async function executeApolloHttp<TContext extends BaseContext>(
  server: ApolloServer<TContext>,
  request: FastifyRequest,
  context: TContext,
): Promise<{ status: number; headers: HeaderMap; body: string }> {
  const headers = new HeaderMap();
  for (const [key, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
  }
  const queryStart = request.url.indexOf('?');
  const response = await server.executeHTTPGraphQLRequest({
    httpGraphQLRequest: {
      method: request.method.toUpperCase(),
      headers,
      search: queryStart >= 0 ? request.url.slice(queryStart) : '',
      body: request.body,
    },
    context: async () => context,
  });
  let body: string;
  if (response.body.kind === 'complete') {
    body = response.body.string;
  } else {
    // Incremental delivery (@defer) is not enabled; collect chunks defensively.
    body = '';
    for await (const chunk of response.body.asyncIterator) body += chunk;
  }
  return { status: response.status ?? 200, headers: response.headers, body };
}

export function writeApolloResponse(reply: FastifyReply, result: { status: number; headers: HeaderMap; body: string }): FastifyReply {
  for (const [key, value] of result.headers) reply.header(key, value);
  return reply.status(result.status).send(result.body);
}
