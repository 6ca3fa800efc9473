import { parseEncryptionKey } from './crypto.js';

/**
 * Configuration: every variable is declared once here with its validator, default and meaning,
 * parsed synchronously before any server listens, and a bad value stops the process with a
 * message naming the variable. Insecure conveniences (generated secrets, GraphQL introspection,
 * private-network webhooks) exist only in the `local` profile, which must be chosen explicitly:
 * `npm start` without a service name chooses it and says so.
 */

export type Profile = 'local' | 'production' | 'test';
export type ServiceName = 'edge' | 'auth' | 'cicd' | 'platform';
type Reader = ServiceName | 'launcher';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

interface VariableSpec<T> {
  /** Environment variable name. */
  name: string;
  /** What it means, for the README's configuration table. */
  description: string;
  /** Default shown in the docs (the parser applies the real one). */
  shownDefault: string;
  /** Which services read it. */
  services: readonly Reader[] | 'all';
  parse(raw: string | undefined, ctx: { profile: Profile; service: ServiceName; env: Env }): T;
}

const catalogue: VariableSpec<unknown>[] = [];

function variable<T>(spec: VariableSpec<T>): VariableSpec<T> {
  catalogue.push(spec as VariableSpec<unknown>);
  return spec;
}

/** The variables of every service, for documentation. */
export function describeConfiguration(): { name: string; services: string; default: string; description: string }[] {
  return catalogue.map((v) => ({
    name: v.name,
    services: v.services === 'all' ? 'all' : v.services.join(', '),
    default: v.shownDefault,
    description: v.description,
  }));
}

function integer(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function url(name: string, raw: string, protocols: string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

/** Secrets must be long enough to resist brute force of an HMAC key: 32 characters or more. */
function secretList(name: string, raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const secrets = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const s of secrets) {
    if (s.length < 32) throw new ConfigError(name, 'must hold secrets of at least 32 characters each');
  }
  return secrets;
}

const defaultPorts: Record<ServiceName, number> = { edge: 8000, auth: 8081, cicd: 8087, platform: 8090 };

const PROFILE = variable<Profile>({
  name: 'APP_PROFILE',
  description: '`production` (default for a single service), `local` (chosen by `npm start` with no service: generated secrets, introspection, embedded services) or `test`.',
  shownDefault: 'production',
  services: 'all',
  parse(raw) {
    const v = (raw ?? 'production').trim();
    if (v !== 'local' && v !== 'production' && v !== 'test') throw new ConfigError('APP_PROFILE', `must be local, production or test, got "${v}"`);
    return v;
  },
});

const PORT = variable<number>({
  name: 'PORT',
  description: 'HTTP port of the service (edge 8000, auth 8081, cicd 8087, platform 8090).',
  shownDefault: 'per service',
  services: 'all',
  parse: (raw, { service }) => integer('PORT', raw, defaultPorts[service], 0, 65535),
});

const HOST = variable<string>({
  name: 'HOST',
  description: 'Interface to listen on.',
  shownDefault: '`0.0.0.0` (production), `127.0.0.1` (local, test)',
  services: 'all',
  parse: (raw, { profile }) => raw?.trim() || (profile === 'production' ? '0.0.0.0' : '127.0.0.1'),
});

const LOG_LEVEL = variable<string>({
  name: 'LOG_LEVEL',
  description: 'pino log level: fatal, error, warn, info, debug, trace or silent.',
  shownDefault: '`info` (`warn` in test)',
  services: 'all',
  parse(raw, { profile }) {
    const v = raw?.trim() || (profile === 'test' ? 'warn' : 'info');
    if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(v)) throw new ConfigError('LOG_LEVEL', `is not a log level: "${v}"`);
    return v;
  },
});

const DATABASE_URL = variable<string | undefined>({
  name: 'DATABASE_URL',
  description: 'PostgreSQL connection URL. Each service keeps its tables in its own schema (`auth`, `cicd`, `platform`). Required except in the local profile, which starts an embedded PostgreSQL in `DATA_DIR`.',
  shownDefault: 'embedded (local profile)',
  services: ['auth', 'cicd', 'platform'],
  parse(raw, { profile }) {
    if (!raw?.trim()) {
      if (profile === 'production') throw new ConfigError('DATABASE_URL', 'is required in the production profile');
      return undefined;
    }
    return url('DATABASE_URL', raw.trim(), ['postgres:', 'postgresql:']);
  },
});

const DATA_DIR = variable<string>({
  name: 'DATA_DIR',
  description: 'Local profile (`npm start`): where the embedded PostgreSQL cluster and the generated development secrets live.',
  shownDefault: '`./.data`',
  services: ['launcher'],
  parse: (raw) => raw?.trim() || '.data',
});

const EMBEDDED_POSTGRES_PORT = variable<number>({
  name: 'EMBEDDED_POSTGRES_PORT',
  description: 'Local profile: port of the embedded PostgreSQL (127.0.0.1 only); a free port is taken when it is busy.',
  shownDefault: '`54329`',
  services: ['launcher'],
  parse: (raw) => integer('EMBEDDED_POSTGRES_PORT', raw, 54329, 1, 65535),
});

function launcherPort(service: Exclude<ServiceName, 'edge'>) {
  const name = `${service.toUpperCase()}_PORT`;
  return variable<number>({
    name,
    description: `Local profile: port of the ${service} subgraph process.`,
    shownDefault: `\`${defaultPorts[service]}\``,
    services: ['launcher'],
    parse: (raw) => integer(name, raw, defaultPorts[service], 0, 65535),
  });
}

const AUTH_PORT = launcherPort('auth');
const CICD_PORT = launcherPort('cicd');
const PLATFORM_PORT = launcherPort('platform');

function accessSecrets(env: Env, profile: Profile): { current: string; previous: string[] } {
  const name = env.JWT_ACCESS_SECRET !== undefined ? 'JWT_ACCESS_SECRET' : 'AUTH_JWT_ACCESS_SECRET';
  const [current] = secretList(name, env.JWT_ACCESS_SECRET ?? env.AUTH_JWT_ACCESS_SECRET);
  const previous = secretList('JWT_ACCESS_SECRETS_PREVIOUS', env.JWT_ACCESS_SECRETS_PREVIOUS);
  if (!current) throw new ConfigError('JWT_ACCESS_SECRET', profile === 'production' ? 'is required in the production profile' : 'is required (the local profile generates one)');
  return { current, previous };
}

const JWT_ACCESS_SECRET = variable<{ current: string; previous: string[] }>({
  name: 'JWT_ACCESS_SECRET',
  description: 'HMAC secret (≥ 32 characters) that signs and verifies access JWTs. `AUTH_JWT_ACCESS_SECRET` is accepted as an alias. Required outside the local profile.',
  shownDefault: 'generated (local profile only)',
  services: ['edge', 'auth'],
  parse: (_raw, { env, profile }) => accessSecrets(env, profile),
});

variable<string[]>({
  name: 'JWT_ACCESS_SECRETS_PREVIOUS',
  description: 'Comma-separated older access secrets still accepted for verification during a rotation (the current secret signs; all verify).',
  shownDefault: 'none',
  services: ['edge', 'auth'],
  parse: (raw) => secretList('JWT_ACCESS_SECRETS_PREVIOUS', raw),
});

const INTERNAL_JWT_SECRET = variable<string>({
  name: 'INTERNAL_JWT_SECRET',
  description: 'HMAC secret (≥ 32 characters) shared by the edge and the subgraphs for the short-lived internal access token the edge forwards. Never accepted from clients. Required outside the local profile.',
  shownDefault: 'generated (local profile only)',
  services: 'all',
  parse(raw) {
    const [secret] = secretList('INTERNAL_JWT_SECRET', raw);
    if (!secret) throw new ConfigError('INTERNAL_JWT_SECRET', 'is required');
    return secret;
  },
});

const BASE_PATH = variable<string>({
  name: 'BASE_PATH',
  description: 'Path under which the edge serves everything (`{base}`).',
  shownDefault: '`/api`',
  services: ['edge'],
  parse(raw) {
    const v = (raw ?? '/api').trim().replace(/\/+$/, '');
    if (v !== '' && !/^\/[A-Za-z0-9._~\-/]*$/.test(v)) throw new ConfigError('BASE_PATH', `must be a path such as /api, got "${raw}"`);
    return v;
  },
});

function subgraphUrl(name: string, service: ServiceName) {
  return variable<string>({
    name,
    description: `GraphQL endpoint of the ${service} subgraph.`,
    shownDefault: `\`http://127.0.0.1:${defaultPorts[service]}/graphql\``,
    services: ['edge'],
    parse: (raw) => url(name, raw?.trim() || `http://127.0.0.1:${defaultPorts[service]}/graphql`, ['http:', 'https:']),
  });
}

const AUTH_SUBGRAPH_URL = subgraphUrl('AUTH_SUBGRAPH_URL', 'auth');
const CICD_SUBGRAPH_URL = subgraphUrl('CICD_SUBGRAPH_URL', 'cicd');
const PLATFORM_SUBGRAPH_URL = subgraphUrl('PLATFORM_SUBGRAPH_URL', 'platform');

const GRAPHQL_INTROSPECTION = variable<boolean>({
  name: 'GRAPHQL_INTROSPECTION',
  description: 'Allow GraphQL introspection at `{base}/graphql` (GraphiQL needs it).',
  shownDefault: '`true` in local and test, `false` in production',
  services: ['edge'],
  parse: (raw, { profile }) => boolean('GRAPHQL_INTROSPECTION', raw, profile !== 'production'),
});

const GRAPHQL_MAX_DEPTH = variable<number>({
  name: 'GRAPHQL_MAX_DEPTH',
  description: 'Deepest selection a GraphQL operation may have.',
  shownDefault: '`10`',
  services: ['edge'],
  parse: (raw) => integer('GRAPHQL_MAX_DEPTH', raw, 10, 1, 100),
});

const GRAPHQL_MAX_ALIASES = variable<number>({
  name: 'GRAPHQL_MAX_ALIASES',
  description: 'Most aliases a GraphQL operation may use.',
  shownDefault: '`15`',
  services: ['edge'],
  parse: (raw) => integer('GRAPHQL_MAX_ALIASES', raw, 15, 0, 1000),
});

const GRAPHQL_MAX_COST = variable<number>({
  name: 'GRAPHQL_MAX_COST',
  description: 'Highest estimated cost of a GraphQL operation (objects 2, scalars 1, times depth factor 1.5).',
  shownDefault: '`5000`',
  services: ['edge'],
  parse: (raw) => integer('GRAPHQL_MAX_COST', raw, 5000, 10, 1_000_000),
});

const BODY_LIMIT_BYTES = variable<number>({
  name: 'BODY_LIMIT_BYTES',
  description: 'Largest request body the edge accepts; larger bodies get 413 `payload_too_large`.',
  shownDefault: '`1048576` (1 MiB)',
  services: ['edge'],
  parse: (raw) => integer('BODY_LIMIT_BYTES', raw, 1024 * 1024, 1024, 64 * 1024 * 1024),
});

const SUBGRAPH_TIMEOUT_MS = variable<number>({
  name: 'SUBGRAPH_TIMEOUT_MS',
  description: 'How long the edge waits for a subgraph before answering 503 `upstream_unavailable`.',
  shownDefault: '`15000`',
  services: ['edge'],
  parse: (raw) => integer('SUBGRAPH_TIMEOUT_MS', raw, 15_000, 100, 600_000),
});

const JWT_REFRESH_SECRET = variable<{ current: string; previous: string[] }>({
  name: 'JWT_REFRESH_SECRET',
  description: 'HMAC secret (≥ 32 characters, different from the access secret) that signs refresh tokens. `JWT_REFRESH_SECRETS_PREVIOUS` lists older ones still accepted. Required outside the local profile.',
  shownDefault: 'generated (local profile only)',
  services: ['auth'],
  parse(raw, { env, profile }) {
    const [current] = secretList('JWT_REFRESH_SECRET', raw);
    if (!current) throw new ConfigError('JWT_REFRESH_SECRET', profile === 'production' ? 'is required in the production profile' : 'is required (the local profile generates one)');
    const access = env.JWT_ACCESS_SECRET ?? env.AUTH_JWT_ACCESS_SECRET;
    if (access && access.trim() === current) throw new ConfigError('JWT_REFRESH_SECRET', 'must differ from JWT_ACCESS_SECRET');
    return { current, previous: secretList('JWT_REFRESH_SECRETS_PREVIOUS', env.JWT_REFRESH_SECRETS_PREVIOUS) };
  },
});

variable<string[]>({
  name: 'JWT_REFRESH_SECRETS_PREVIOUS',
  description: 'Comma-separated older refresh secrets still accepted during a rotation.',
  shownDefault: 'none',
  services: ['auth'],
  parse: (raw) => secretList('JWT_REFRESH_SECRETS_PREVIOUS', raw),
});

const ACCESS_TOKEN_TTL_SECS = variable<number>({
  name: 'ACCESS_TOKEN_TTL_SECS',
  description: 'Lifetime of access tokens (session and client-credentials).',
  shownDefault: '`900` (15 min)',
  services: ['auth', 'edge'],
  parse: (raw) => integer('ACCESS_TOKEN_TTL_SECS', raw, 900, 60, 24 * 3600),
});

const REFRESH_TOKEN_TTL_SECS = variable<number>({
  name: 'REFRESH_TOKEN_TTL_SECS',
  description: 'Lifetime of a session (its refresh tokens).',
  shownDefault: '`2592000` (30 days)',
  services: ['auth'],
  parse: (raw) => integer('REFRESH_TOKEN_TTL_SECS', raw, 30 * 24 * 3600, 300, 365 * 24 * 3600),
});

const LOGIN_RATE_LIMIT = variable<number>({
  name: 'LOGIN_RATE_LIMIT',
  description: 'Login or registration attempts allowed per identifier (email or username) within the window.',
  shownDefault: '`10`',
  services: ['auth'],
  parse: (raw) => integer('LOGIN_RATE_LIMIT', raw, 10, 1, 10_000),
});

const LOGIN_RATE_WINDOW_SECS = variable<number>({
  name: 'LOGIN_RATE_WINDOW_SECS',
  description: 'Length of the rolling window for login and registration attempts.',
  shownDefault: '`900` (15 min)',
  services: ['auth'],
  parse: (raw) => integer('LOGIN_RATE_WINDOW_SECS', raw, 900, 1, 24 * 3600),
});

const REDIS_URL = variable<string | undefined>({
  name: 'REDIS_URL',
  description: 'Redis for counters shared by replicas: the edge\'s per-token budgets and auth\'s login attempts (sliding window). In-memory when unset.',
  shownDefault: 'in-memory',
  services: ['edge', 'auth'],
  parse: (raw) => (raw?.trim() ? url('REDIS_URL', raw.trim(), ['redis:', 'rediss:']) : undefined),
});

const REDIS_KEY_PREFIX = variable<string>({
  name: 'REDIS_KEY_PREFIX',
  description: 'Prefix of every Redis key the platform writes, so that several deployments (or test runs) can share one Redis.',
  shownDefault: '`cloudops:`',
  services: ['edge', 'auth'],
  parse(raw) {
    const v = raw?.trim() || 'cloudops:';
    if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(v)) throw new ConfigError('REDIS_KEY_PREFIX', 'must be 1 to 64 characters: letters, digits, colon, dot, dash, underscore');
    return v;
  },
});

const CACHE_SERVICE_BASE_URL = variable<string | undefined>({
  name: 'CACHE_SERVICE_BASE_URL',
  description: 'Cache service counting login attempts (contract in the README), used instead of Redis when set. Needs `CACHE_SERVICE_API_KEY`.',
  shownDefault: 'none',
  services: ['auth'],
  parse(raw, { env }) {
    if (!raw?.trim()) return undefined;
    if (!env.CACHE_SERVICE_API_KEY?.trim()) throw new ConfigError('CACHE_SERVICE_API_KEY', 'is required when CACHE_SERVICE_BASE_URL is set');
    return url('CACHE_SERVICE_BASE_URL', raw.trim().replace(/\/+$/, ''), ['http:', 'https:']);
  },
});

variable<string | undefined>({
  name: 'CACHE_SERVICE_API_KEY',
  description: 'Shared secret sent to the cache service as a bearer token.',
  shownDefault: 'none',
  services: ['auth'],
  parse: (raw) => raw?.trim() || undefined,
});

const BOOTSTRAP_SUPER_ADMIN = variable<{ email: string; username: string; password: string } | undefined>({
  name: 'BOOTSTRAP_SUPER_ADMIN_EMAIL',
  description: 'With `BOOTSTRAP_SUPER_ADMIN_PASSWORD` (and optionally `BOOTSTRAP_SUPER_ADMIN_USERNAME`, default `superadmin`): auth upserts this platform-wide super-admin at start (idempotent). The local profile generates one and prints it once when unset.',
  shownDefault: 'none',
  services: ['auth'],
  parse(raw, { env }) {
    if (!raw?.trim()) return undefined;
    const password = env.BOOTSTRAP_SUPER_ADMIN_PASSWORD;
    if (!password) throw new ConfigError('BOOTSTRAP_SUPER_ADMIN_PASSWORD', 'is required when BOOTSTRAP_SUPER_ADMIN_EMAIL is set');
    return { email: raw.trim(), username: env.BOOTSTRAP_SUPER_ADMIN_USERNAME?.trim() || 'superadmin', password };
  },
});

const RATE_LIMIT_PER_MINUTE = variable<number>({
  name: 'RATE_LIMIT_PER_MINUTE',
  description: 'Request budget per token (per client address for anonymous calls) per minute at the edge.',
  shownDefault: '`600`',
  services: ['edge'],
  parse: (raw) => integer('RATE_LIMIT_PER_MINUTE', raw, 600, 1, 10_000_000),
});

const TRUST_PROXY = variable<boolean | number | string>({
  name: 'TRUST_PROXY',
  description: 'Which proxies in front of the edge to trust for the client address (X-Forwarded-For), which keys anonymous request budgets: `false`, `true`, a hop count, or comma-separated addresses/CIDRs.',
  shownDefault: '`false`',
  services: ['edge'],
  parse(raw) {
    const v = raw?.trim();
    if (!v || v === 'false') return false;
    if (v === 'true') return true;
    if (/^\d{1,2}$/.test(v)) return Number(v);
    if (/^[0-9a-fA-F:.\/,\s]+$/.test(v)) return v;
    throw new ConfigError('TRUST_PROXY', `must be true, false, a hop count or addresses/CIDRs, got "${v}"`);
  },
});

const REVOCATION_POLL_MS = variable<number>({
  name: 'REVOCATION_POLL_MS',
  description: 'How often the edge fetches the revocation feed (logouts, revoked tokens) from auth; the edge that handled a logout applies it at once.',
  shownDefault: '`1000`',
  services: ['edge'],
  parse: (raw) => integer('REVOCATION_POLL_MS', raw, 1000, 50, 60_000),
});

const CREDENTIAL_CACHE_SECS = variable<number>({
  name: 'CREDENTIAL_CACHE_SECS',
  description: 'How long the edge reuses what auth answered for a personal access token or API key (revocations still apply at once).',
  shownDefault: '`30`',
  services: ['edge'],
  parse: (raw) => integer('CREDENTIAL_CACHE_SECS', raw, 30, 0, 3600),
});

const SECRET_ENCRYPTION_KEY = variable<string>({
  name: 'SECRET_ENCRYPTION_KEY',
  description: 'AES-256-GCM key (32 bytes as 64 hex characters or base64) that encrypts secrets at rest, such as pipeline webhook secrets. Required outside the local profile.',
  shownDefault: 'generated (local profile only)',
  services: ['cicd', 'platform'],
  parse(raw) {
    const text = raw?.trim() ?? '';
    if (!text) throw new ConfigError('SECRET_ENCRYPTION_KEY', 'is required');
    if (!parseEncryptionKey(text)) throw new ConfigError('SECRET_ENCRYPTION_KEY', 'must be 32 bytes: 64 hex characters or 44 base64 characters');
    return text;
  },
});

const PUBLIC_URL = variable<string>({
  name: 'PUBLIC_URL',
  description: 'Public address of the API, `{base_url}` of the spec (e.g. `https://api.example.com/api`); webhook URLs shown to users are built from it.',
  shownDefault: '`http://127.0.0.1:8000/api` (local and test only)',
  services: ['cicd', 'platform'],
  parse(raw, { profile }) {
    if (!raw?.trim()) {
      if (profile === 'production') throw new ConfigError('PUBLIC_URL', 'is required in the production profile');
      return 'http://127.0.0.1:8000/api';
    }
    return url('PUBLIC_URL', raw.trim().replace(/\/+$/, ''), ['http:', 'https:']);
  },
});

const RABBITMQ_URL = variable<string | undefined>({
  name: 'RABBITMQ_URL',
  description: 'RabbitMQ for events (`platform.events`, `cicd.events`), published through each service\'s outbox with publisher confirms. An in-process bus when unset.',
  shownDefault: 'in-process bus',
  services: ['cicd', 'platform'],
  parse: (raw) => (raw?.trim() ? url('RABBITMQ_URL', raw.trim(), ['amqp:', 'amqps:']) : undefined),
});

const RABBITMQ_QUEUE_PREFIX = variable<string>({
  name: 'RABBITMQ_QUEUE_PREFIX',
  description: 'Prefix of this deployment\'s durable queue names, so several deployments (or test runs) can share one broker.',
  shownDefault: 'none',
  services: ['platform'],
  parse(raw) {
    const v = raw?.trim() ?? '';
    if (!/^[A-Za-z0-9._:-]{0,64}$/.test(v)) throw new ConfigError('RABBITMQ_QUEUE_PREFIX', 'must be up to 64 letters, digits, ".", "_", ":" or "-"');
    return v;
  },
});

const WEBHOOK_ALLOW_PRIVATE_NETWORKS = variable<boolean>({
  name: 'WEBHOOK_ALLOW_PRIVATE_NETWORKS',
  description: 'Lets outbound webhooks reach loopback, private and link-local addresses (refused at send time otherwise, against SSRF). Only the `local` and `test` profiles may set it.',
  shownDefault: '`false` (`true` in the local profile)',
  services: ['platform'],
  parse(raw, { profile }) {
    const value = boolean('WEBHOOK_ALLOW_PRIVATE_NETWORKS', raw, profile === 'local');
    if (value && profile === 'production') throw new ConfigError('WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'cannot be true in the production profile');
    return value;
  },
});

const WEBHOOK_CA_FILE = variable<string | undefined>({
  name: 'WEBHOOK_CA_FILE',
  description: 'PEM file of extra certificate authorities trusted for webhook receivers, besides the system ones (test receivers, private PKI).',
  shownDefault: 'none',
  services: ['platform'],
  parse: (raw) => raw?.trim() || undefined,
});

const WEBHOOK_CONCURRENCY = variable<number>({
  name: 'WEBHOOK_CONCURRENCY',
  description: 'Deliveries one platform replica sends at once.',
  shownDefault: '`64`',
  services: ['platform'],
  parse: (raw) => integer('WEBHOOK_CONCURRENCY', raw, 64, 1, 1024),
});

const APPS_BASE_DOMAIN = variable<string>({
  name: 'APPS_BASE_DOMAIN',
  description: 'Parent domain of app addresses: `<app>-<cloudspace>.{APPS_BASE_DOMAIN}` (`{apps_base_domain}` of the spec).',
  shownDefault: '`apps.localtest.me` (local and test only)',
  services: ['platform'],
  parse(raw, { profile }) {
    const v = raw?.trim().toLowerCase().replace(/\.$/, '');
    if (!v) {
      if (profile === 'production') throw new ConfigError('APPS_BASE_DOMAIN', 'is required in the production profile');
      return 'apps.localtest.me';
    }
    if (!/^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(v) || v.length > 190) throw new ConfigError('APPS_BASE_DOMAIN', `must be a domain name, got "${v}"`);
    return v;
  },
});

const FLUX_GIT_URL = variable<string | undefined>({
  name: 'FLUX_GIT_URL',
  description: 'Fleet repository the app controller commits rendered manifests to (any URL git can push to; credentials through the usual git means). The local profile makes a bare repository in `DATA_DIR`.',
  shownDefault: 'local bare repo (local)',
  services: ['platform'],
  parse: (raw) => raw?.trim() || undefined,
});

const FLUX_GIT_BRANCH = variable<string>({
  name: 'FLUX_GIT_BRANCH',
  description: 'Branch of the fleet repository.',
  shownDefault: '`main`',
  services: ['platform'],
  parse(raw) {
    const v = raw?.trim() || 'main';
    if (!/^[A-Za-z0-9._/-]{1,100}$/.test(v) || v.includes('..')) throw new ConfigError('FLUX_GIT_BRANCH', `is not a valid branch name: "${v}"`);
    return v;
  },
});

const FLUX_GIT_WORKDIR = variable<string | undefined>({
  name: 'FLUX_GIT_WORKDIR',
  description: 'Where the platform keeps its working copy of the fleet repository.',
  shownDefault: 'a temporary directory',
  services: ['platform'],
  parse: (raw) => raw?.trim() || undefined,
});

const APPS_INGRESS_ADDRESS = variable<string | undefined>({
  name: 'APPS_INGRESS_ADDRESS',
  description: 'host:port the reachability check connects to instead of resolving app addresses (the local profile\'s ingress); unset: DNS, port 443.',
  shownDefault: 'none',
  services: ['platform'],
  parse(raw) {
    const v = raw?.trim();
    if (!v) return undefined;
    if (!/^[A-Za-z0-9.-]+:\d{1,5}$/.test(v)) throw new ConfigError('APPS_INGRESS_ADDRESS', `must be host:port, got "${v}"`);
    return v;
  },
});

const APPS_INGRESS_CA_FILE = variable<string | undefined>({
  name: 'APPS_INGRESS_CA_FILE',
  description: 'PEM file of extra CAs the reachability check trusts for app addresses (the local ingress\'s CA).',
  shownDefault: 'none',
  services: ['platform'],
  parse: (raw) => raw?.trim() || undefined,
});

const KUBE_SIM_PORT = variable<number>({
  name: 'KUBE_SIM_PORT',
  description: 'Port of kube-sim, the local Kubernetes API double the local profile starts when KUBECONFIG is not set (a free one if taken).',
  shownDefault: '`8001`',
  services: ['launcher'],
  parse: (raw) => integer('KUBE_SIM_PORT', raw, 8001, 0, 65535),
});

const LOCAL_INGRESS_PORT = variable<number>({
  name: 'LOCAL_INGRESS_PORT',
  description: 'Port of the local profile\'s HTTPS ingress for app addresses (a free one if taken).',
  shownDefault: '`8443`',
  services: ['launcher'],
  parse: (raw) => integer('LOCAL_INGRESS_PORT', raw, 8443, 0, 65535),
});

const REGISTER_MANAGEMENT_CLUSTER = variable<boolean>({
  name: 'REGISTER_MANAGEMENT_CLUSTER',
  description: 'Register the management cluster at start when it is not yet (as POST /clusters/register-self would), so CloudSpaces can be created at once.',
  shownDefault: '`true` in the local profile, `false` otherwise',
  services: ['platform'],
  parse: (raw, { profile }) => boolean('REGISTER_MANAGEMENT_CLUSTER', raw, profile === 'local'),
});

const KUBECONFIG = variable<string | undefined>({
  name: 'KUBECONFIG',
  description: 'Kubeconfig file of the management (host) cluster. Unset: the in-cluster service account when running in a pod; otherwise Kubernetes features answer 503. The local profile points it at kube-sim.',
  shownDefault: 'in-cluster, or kube-sim (local)',
  services: ['platform'],
  parse: (raw) => raw?.trim() || undefined,
});

const CLUSTER_API_NAMESPACE = variable<string>({
  name: 'CLUSTER_API_NAMESPACE',
  description: 'Namespace of the management cluster where clusters created through Cluster API are declared.',
  shownDefault: '`cloudops-clusters`',
  services: ['platform'],
  parse(raw) {
    const v = raw?.trim() || 'cloudops-clusters';
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(v)) throw new ConfigError('CLUSTER_API_NAMESPACE', `must be a DNS label, got "${v}"`);
    return v;
  },
});

const WORKFLOW_MANAGER_URL = variable<string | undefined>({
  name: 'WORKFLOW_MANAGER_URL',
  description: 'Base URL of workflow-manager, told at once when a cluster is registered, connected or removed (retried through the outbox while it is down). Unset: skipped, with a log line.',
  shownDefault: 'none',
  services: ['platform'],
  parse: (raw) => (raw?.trim() ? url('WORKFLOW_MANAGER_URL', raw.trim().replace(/\/+$/, ''), ['http:', 'https:']) : undefined),
});

export interface BaseConfig {
  service: ServiceName;
  profile: Profile;
  port: number;
  host: string;
  logLevel: string;
  internalJwtSecret: string;
}

export interface SubgraphConfig extends BaseConfig {
  databaseUrl: string | undefined;
}

export interface AuthConfig extends SubgraphConfig {
  accessSecrets: { current: string; previous: string[] };
  refreshSecrets: { current: string; previous: string[] };
  accessTokenTtlSecs: number;
  refreshTokenTtlSecs: number;
  loginRateLimit: { limit: number; windowSecs: number };
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  cacheService: { baseUrl: string; apiKey: string } | undefined;
  bootstrapSuperAdmin: { email: string; username: string; password: string } | undefined;
}

export interface CicdConfig extends SubgraphConfig {
  secretEncryptionKey: string;
  publicUrl: string;
  rabbitmqUrl: string | undefined;
}

export interface PlatformConfig extends SubgraphConfig {
  secretEncryptionKey: string;
  publicUrl: string;
  rabbitmqUrl: string | undefined;
  queuePrefix: string;
  kubeconfig: string | undefined;
  registerManagementCluster: boolean;
  apps: { baseDomain: string; gitUrl: string | undefined; gitBranch: string; gitWorkdir: string | undefined; ingressAddress: string | undefined; ingressCaFile: string | undefined };
  clusterApiNamespace: string;
  workflowManagerUrl: string | undefined;
  webhooks: { allowPrivateNetworks: boolean; caFile: string | undefined; concurrency: number };
}

export interface EdgeConfig extends BaseConfig {
  basePath: string;
  accessSecrets: { current: string; previous: string[] };
  subgraphs: { auth: string; cicd: string; platform: string };
  graphql: { introspection: boolean; maxDepth: number; maxAliases: number; maxCost: number };
  bodyLimitBytes: number;
  subgraphTimeoutMs: number;
  rateLimitPerMinute: number;
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  revocationPollMs: number;
  credentialCacheSecs: number;
  accessTokenTtlSecs: number;
  trustProxy: boolean | number | string;
}

function parseWith<T>(spec: VariableSpec<T>, env: Env, profile: Profile, service: ServiceName): T {
  return spec.parse(env[spec.name], { env, profile, service });
}

function loadBase(service: ServiceName, env: Env): BaseConfig {
  const profile = PROFILE.parse(env.APP_PROFILE, { env, profile: 'production', service });
  return {
    service,
    profile,
    port: parseWith(PORT, env, profile, service),
    host: parseWith(HOST, env, profile, service),
    logLevel: parseWith(LOG_LEVEL, env, profile, service),
    internalJwtSecret: parseWith(INTERNAL_JWT_SECRET, env, profile, service),
  };
}

export function loadSubgraphConfig(service: Exclude<ServiceName, 'edge'>, env: Env = process.env): SubgraphConfig {
  const base = loadBase(service, env);
  return { ...base, databaseUrl: parseWith(DATABASE_URL, env, base.profile, service) };
}

export function loadAuthConfig(env: Env = process.env): AuthConfig {
  const base = loadSubgraphConfig('auth', env);
  const p = base.profile;
  const cacheUrl = parseWith(CACHE_SERVICE_BASE_URL, env, p, 'auth');
  return {
    ...base,
    accessSecrets: parseWith(JWT_ACCESS_SECRET, env, p, 'auth'),
    refreshSecrets: parseWith(JWT_REFRESH_SECRET, env, p, 'auth'),
    accessTokenTtlSecs: parseWith(ACCESS_TOKEN_TTL_SECS, env, p, 'auth'),
    refreshTokenTtlSecs: parseWith(REFRESH_TOKEN_TTL_SECS, env, p, 'auth'),
    loginRateLimit: { limit: parseWith(LOGIN_RATE_LIMIT, env, p, 'auth'), windowSecs: parseWith(LOGIN_RATE_WINDOW_SECS, env, p, 'auth') },
    redisUrl: parseWith(REDIS_URL, env, p, 'auth'),
    redisKeyPrefix: parseWith(REDIS_KEY_PREFIX, env, p, 'auth'),
    cacheService: cacheUrl ? { baseUrl: cacheUrl, apiKey: env.CACHE_SERVICE_API_KEY!.trim() } : undefined,
    bootstrapSuperAdmin: parseWith(BOOTSTRAP_SUPER_ADMIN, env, p, 'auth'),
  };
}

export function loadCicdConfig(env: Env = process.env): CicdConfig {
  const base = loadSubgraphConfig('cicd', env);
  const p = base.profile;
  return {
    ...base,
    secretEncryptionKey: parseWith(SECRET_ENCRYPTION_KEY, env, p, 'cicd'),
    publicUrl: parseWith(PUBLIC_URL, env, p, 'cicd'),
    rabbitmqUrl: parseWith(RABBITMQ_URL, env, p, 'cicd'),
  };
}

export function loadPlatformConfig(env: Env = process.env): PlatformConfig {
  const base = loadSubgraphConfig('platform', env);
  const p = base.profile;
  return {
    ...base,
    secretEncryptionKey: parseWith(SECRET_ENCRYPTION_KEY, env, p, 'platform'),
    publicUrl: parseWith(PUBLIC_URL, env, p, 'platform'),
    rabbitmqUrl: parseWith(RABBITMQ_URL, env, p, 'platform'),
    queuePrefix: parseWith(RABBITMQ_QUEUE_PREFIX, env, p, 'platform'),
    kubeconfig: parseWith(KUBECONFIG, env, p, 'platform'),
    registerManagementCluster: parseWith(REGISTER_MANAGEMENT_CLUSTER, env, p, 'platform'),
    apps: {
      baseDomain: parseWith(APPS_BASE_DOMAIN, env, p, 'platform'),
      gitUrl: parseWith(FLUX_GIT_URL, env, p, 'platform'),
      gitBranch: parseWith(FLUX_GIT_BRANCH, env, p, 'platform'),
      gitWorkdir: parseWith(FLUX_GIT_WORKDIR, env, p, 'platform'),
      ingressAddress: parseWith(APPS_INGRESS_ADDRESS, env, p, 'platform'),
      ingressCaFile: parseWith(APPS_INGRESS_CA_FILE, env, p, 'platform'),
    },
    clusterApiNamespace: parseWith(CLUSTER_API_NAMESPACE, env, p, 'platform'),
    workflowManagerUrl: parseWith(WORKFLOW_MANAGER_URL, env, p, 'platform'),
    webhooks: {
      allowPrivateNetworks: parseWith(WEBHOOK_ALLOW_PRIVATE_NETWORKS, env, p, 'platform'),
      caFile: parseWith(WEBHOOK_CA_FILE, env, p, 'platform'),
      concurrency: parseWith(WEBHOOK_CONCURRENCY, env, p, 'platform'),
    },
  };
}

export function loadEdgeConfig(env: Env = process.env): EdgeConfig {
  const base = loadBase('edge', env);
  const p = base.profile;
  return {
    ...base,
    basePath: parseWith(BASE_PATH, env, p, 'edge'),
    accessSecrets: parseWith(JWT_ACCESS_SECRET, env, p, 'edge'),
    subgraphs: {
      auth: parseWith(AUTH_SUBGRAPH_URL, env, p, 'edge'),
      cicd: parseWith(CICD_SUBGRAPH_URL, env, p, 'edge'),
      platform: parseWith(PLATFORM_SUBGRAPH_URL, env, p, 'edge'),
    },
    graphql: {
      introspection: parseWith(GRAPHQL_INTROSPECTION, env, p, 'edge'),
      maxDepth: parseWith(GRAPHQL_MAX_DEPTH, env, p, 'edge'),
      maxAliases: parseWith(GRAPHQL_MAX_ALIASES, env, p, 'edge'),
      maxCost: parseWith(GRAPHQL_MAX_COST, env, p, 'edge'),
    },
    bodyLimitBytes: parseWith(BODY_LIMIT_BYTES, env, p, 'edge'),
    subgraphTimeoutMs: parseWith(SUBGRAPH_TIMEOUT_MS, env, p, 'edge'),
    rateLimitPerMinute: parseWith(RATE_LIMIT_PER_MINUTE, env, p, 'edge'),
    redisUrl: parseWith(REDIS_URL, env, p, 'edge'),
    redisKeyPrefix: parseWith(REDIS_KEY_PREFIX, env, p, 'edge'),
    revocationPollMs: parseWith(REVOCATION_POLL_MS, env, p, 'edge'),
    credentialCacheSecs: parseWith(CREDENTIAL_CACHE_SECS, env, p, 'edge'),
    accessTokenTtlSecs: parseWith(ACCESS_TOKEN_TTL_SECS, env, p, 'edge'),
    trustProxy: parseWith(TRUST_PROXY, env, p, 'edge'),
  };
}

export interface LauncherConfig {
  dataDir: string;
  embeddedPostgresPort: number;
  kubeSimPort: number;
  ingressPort: number;
  ports: Record<Exclude<ServiceName, 'edge'>, number>;
}

/** What `npm start` without a service (the local profile's launcher) reads. */
export function loadLauncherConfig(env: Env = process.env): LauncherConfig {
  const at = <T>(spec: VariableSpec<T>) => parseWith(spec, env, 'local', 'edge');
  return {
    dataDir: at(DATA_DIR),
    embeddedPostgresPort: at(EMBEDDED_POSTGRES_PORT),
    kubeSimPort: at(KUBE_SIM_PORT),
    ingressPort: at(LOCAL_INGRESS_PORT),
    ports: { auth: at(AUTH_PORT), cicd: at(CICD_PORT), platform: at(PLATFORM_PORT) },
  };
}

export const defaultServicePorts: Readonly<Record<ServiceName, number>> = defaultPorts;
