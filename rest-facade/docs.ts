import type { FastifyInstance, FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

interface Asset {
  body: Buffer;
  type: string;
}

function asset(pkg: string, file: string, type: string): Asset {
  return { body: readFileSync(join(packageDir(pkg), file)), type };
}

/**
 * The interactive browsers, served from npm packages (no CDN): Swagger UI at `{base}/docs` on
 * the generated OpenAPI document, and GraphiQL at `GET {base}/graphql` for browsers.
 */
export function registerDocs(app: FastifyInstance, basePath: string): { graphiqlPage: string; sendGraphiql(reply: FastifyReply): FastifyReply } {
  const assets: Record<string, Asset> = {
    'swagger-ui.css': asset('swagger-ui-dist', 'swagger-ui.css', 'text/css; charset=utf-8'),
    'swagger-ui-bundle.js': asset('swagger-ui-dist', 'swagger-ui-bundle.js', 'application/javascript; charset=utf-8'),
    'swagger-ui-standalone-preset.js': asset('swagger-ui-dist', 'swagger-ui-standalone-preset.js', 'application/javascript; charset=utf-8'),
    'favicon-32x32.png': asset('swagger-ui-dist', 'favicon-32x32.png', 'image/png'),
    'graphiql.min.css': asset('graphiql', 'graphiql.min.css', 'text/css; charset=utf-8'),
    'graphiql.min.js': asset('graphiql', 'graphiql.min.js', 'application/javascript; charset=utf-8'),
    'react.production.min.js': asset('react', 'umd/react.production.min.js', 'application/javascript; charset=utf-8'),
    'react-dom.production.min.js': asset('react-dom', 'umd/react-dom.production.min.js', 'application/javascript; charset=utf-8'),
  };
  const assetBase = `${basePath}/docs/assets`;

  const docsPage = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Cloud operations platform API</title>
  <link rel="icon" type="image/png" href="${assetBase}/favicon-32x32.png">
  <link rel="stylesheet" href="${assetBase}/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${assetBase}/swagger-ui-bundle.js"></script>
  <script src="${assetBase}/swagger-ui-standalone-preset.js"></script>
  <script src="${assetBase}/docs-init.js"></script>
</body>
</html>`;
  const docsInit = `window.ui = SwaggerUIBundle({
  urls: [
    { url: '${basePath}/openapi.json', name: 'All services' },
    { url: '${basePath}/platform/openapi.json', name: 'platform' },
    { url: '${basePath}/auth/openapi.json', name: 'auth' },
    { url: '${basePath}/cicd/openapi.json', name: 'cicd' }
  ],
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout'
});`;

  const graphiqlPage = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>GraphiQL · Cloud operations platform</title>
  <style>body { margin: 0; height: 100vh; } #graphiql { height: 100vh; }</style>
  <link rel="stylesheet" href="${assetBase}/graphiql.min.css">
</head>
<body>
  <div id="graphiql">Loading…</div>
  <script src="${assetBase}/react.production.min.js"></script>
  <script src="${assetBase}/react-dom.production.min.js"></script>
  <script src="${assetBase}/graphiql.min.js"></script>
  <script src="${assetBase}/graphiql-init.js"></script>
</body>
</html>`;
  const graphiqlInit = `const fetcher = GraphiQL.createFetcher({ url: '${basePath}/graphql' });
ReactDOM.createRoot(document.getElementById('graphiql')).render(
  React.createElement(GraphiQL, {
    fetcher,
    defaultEditorToolsVisibility: true,
    // No placeholder header: a bad Authorization header would make the schema fetch fail.
    defaultQuery: [
      '# Cloud operations platform: the federated graph.',
      '# Sign in (POST /api/auth/api/v1/auth/login), then add under Headers:',
      '#   { "Authorization": "Bearer <access token>" }',
      '',
      '{',
      '  viewer { subject tenantId roles scopes }',
      '}',
      ''
    ].join('\\n')
  })
);`;
  assets['docs-init.js'] = { body: Buffer.from(docsInit), type: 'application/javascript; charset=utf-8' };
  assets['graphiql-init.js'] = { body: Buffer.from(graphiqlInit), type: 'application/javascript; charset=utf-8' };

  // Scripts only from this origin: the pages need no CDN and must not load from one.
  const csp = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'";
  const html = (reply: FastifyReply, page: string) => reply.header('content-type', 'text/html; charset=utf-8').header('content-security-policy', csp).send(page);

  app.get(`${basePath}/docs`, async (_request, reply) => html(reply, docsPage));
  app.get(`${assetBase}/:file`, async (request, reply) => {
    const found = assets[(request.params as { file: string }).file];
    if (!found) return reply.callNotFound();
    return reply.header('content-type', found.type).header('cache-control', 'public, max-age=3600').send(found.body);
  });

  return { graphiqlPage, sendGraphiql: (reply) => html(reply, graphiqlPage) };
}
