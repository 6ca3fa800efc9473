import { Validator } from '@seriousme/openapi-schema-validator';
import { generateContract } from '../scripts/contract.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../kernel/paths.js';

describe('generated contract files', () => {
  it('are up to date with the code (run npm run schema when this fails)', async () => {
    const files = await generateContract();
    expect(Object.keys(files).sort()).toEqual([
      'schema/auth.graphql',
      'schema/cicd.graphql',
      'schema/events.json',
      'schema/openapi.json',
      'schema/platform.graphql',
      'schema/supergraph.graphql',
    ]);
    for (const [path, content] of Object.entries(files)) {
      const checkedIn = readFileSync(join(projectRoot(), path), 'utf8');
      // Compared one by one so the failure names the stale file.
      expect({ path, content: checkedIn }).toEqual({ path, content });
    }
  });
});

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 and has a unique operation id per operation', async () => {
    const document = JSON.parse(readFileSync(join(projectRoot(), 'schema', 'openapi.json'), 'utf8'));
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Object.keys(document.webhooks)).toEqual(expect.arrayContaining(['incident.created', 'app.deployed', 'pipeline.run_completed', 'cloudspace.ready']));
    expect(document.webhooks['incident.created'].post.requestBody.content['application/json'].schema.properties.data.required).toEqual(
      ['incident_id', 'cluster_id', 'title', 'severity', 'status', 'category', 'namespace', 'affected_service', 'url'],
    );
    const ids = Object.values(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });
});
