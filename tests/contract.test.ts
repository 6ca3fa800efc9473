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
