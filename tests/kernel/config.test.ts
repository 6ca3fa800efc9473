import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../kernel/paths.js';
import { ConfigError, describeConfiguration, loadEdgeConfig, loadLauncherConfig, loadSubgraphConfig } from '../../kernel/config.js';

const secret = 's'.repeat(40);

describe('configuration', () => {
  it('refuses to start production without its secrets and database, naming the variable', () => {
    expect(() => loadSubgraphConfig('platform', { INTERNAL_JWT_SECRET: secret })).toThrow(/DATABASE_URL is required in the production profile/);
    expect(() => loadSubgraphConfig('platform', { DATABASE_URL: 'postgres://x/db' })).toThrow(/INTERNAL_JWT_SECRET/);
    expect(() => loadEdgeConfig({ INTERNAL_JWT_SECRET: secret })).toThrow(/JWT_ACCESS_SECRET is required in the production profile/);
  });

  it('refuses short secrets', () => {
    expect(() => loadEdgeConfig({ INTERNAL_JWT_SECRET: secret, JWT_ACCESS_SECRET: 'short' })).toThrow(/at least 32 characters/);
  });

  it('names the variable of a malformed value', () => {
    const base = { INTERNAL_JWT_SECRET: secret, JWT_ACCESS_SECRET: secret };
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: 'eighty' }, /PORT must be an integer/],
      [{ PORT: '70000' }, /PORT must be between 0 and 65535/],
      [{ APP_PROFILE: 'staging' }, /APP_PROFILE must be local, production or test/],
      [{ GRAPHQL_INTROSPECTION: 'maybe' }, /GRAPHQL_INTROSPECTION must be true or false/],
      [{ BASE_PATH: 'api with space' }, /BASE_PATH/],
      [{ PLATFORM_SUBGRAPH_URL: 'ftp://x' }, /PLATFORM_SUBGRAPH_URL must use http: or https:/],
      [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
      [{ TRUST_PROXY: 'everyone' }, /TRUST_PROXY/],
    ];
    for (const [env, message] of cases) {
      let error: unknown;
      try {
        loadEdgeConfig({ ...base, ...env });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(message);
    }
  });

  it('keeps insecure conveniences out of production', () => {
    const production = loadEdgeConfig({ INTERNAL_JWT_SECRET: secret, JWT_ACCESS_SECRET: secret });
    expect(production.profile).toBe('production');
    expect(production.graphql.introspection).toBe(false);
    expect(production.host).toBe('0.0.0.0');
    const local = loadEdgeConfig({ APP_PROFILE: 'local', INTERNAL_JWT_SECRET: secret, JWT_ACCESS_SECRET: secret });
    expect(local.graphql.introspection).toBe(true);
    expect(local.host).toBe('127.0.0.1');
  });

  it('applies the documented defaults', () => {
    const edge = loadEdgeConfig({ INTERNAL_JWT_SECRET: secret, AUTH_JWT_ACCESS_SECRET: secret, JWT_ACCESS_SECRETS_PREVIOUS: `${'p'.repeat(32)},${'q'.repeat(32)}` });
    expect(edge.port).toBe(8000);
    expect(edge.basePath).toBe('/api');
    expect(edge.accessSecrets).toEqual({ current: secret, previous: ['p'.repeat(32), 'q'.repeat(32)] });
    expect(edge.subgraphs.platform).toBe('http://127.0.0.1:8090/graphql');
    expect(edge.trustProxy).toBe(false);
    expect(loadEdgeConfig({ INTERNAL_JWT_SECRET: secret, JWT_ACCESS_SECRET: secret, TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toBe('10.0.0.0/8, 127.0.0.1');
    expect(loadSubgraphConfig('auth', { INTERNAL_JWT_SECRET: secret, DATABASE_URL: 'postgres://h/db' }).port).toBe(8081);
    expect(loadSubgraphConfig('cicd', { INTERNAL_JWT_SECRET: secret, DATABASE_URL: 'postgres://h/db' }).port).toBe(8087);
  });

  it('documents every variable', () => {
    const names = describeConfiguration().map((v) => v.name);
    expect(names).toEqual(expect.arrayContaining(['DATABASE_URL', 'JWT_ACCESS_SECRET', 'INTERNAL_JWT_SECRET', 'BASE_PATH', 'PORT', 'APP_PROFILE']));
    for (const v of describeConfiguration()) expect(v.description.length).toBeGreaterThan(10);
  });

  it('has every variable in the README configuration table', () => {
    const readme = readFileSync(join(projectRoot(), 'README.md'), 'utf8');
    const missing = describeConfiguration().filter((v) => !readme.includes(`\`${v.name}\``));
    expect(missing.map((v) => v.name)).toEqual([]);
  });

  it('validates the local launcher settings', () => {
    expect(loadLauncherConfig({})).toEqual({ dataDir: '.data', embeddedPostgresPort: 54329, kubeSimPort: 8001, ingressPort: 8443, ports: { auth: 8081, cicd: 8087, platform: 8090 } });
    expect(() => loadLauncherConfig({ PLATFORM_PORT: 'x' })).toThrow(/PLATFORM_PORT must be an integer/);
  });
});
