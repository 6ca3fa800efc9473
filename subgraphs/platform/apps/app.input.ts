import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { checkQuantity } from '../cloudspaces/cloudspace.service.js';
import { checkDnsLabel } from '../clusters/cluster.service.js';
import type { Autoscaling, HealthCheck } from './app.entity.js';

/** What create and update accept (GraphQL inputs map onto it; snake_case in REST). */
export interface AppFields {
  name?: string | null;
  cloudspaceId?: string | null;
  source?: { type: string; image?: string | null } | null;
  port?: number | null;
  resources?: { cpuRequest?: string | null; memoryRequest?: string | null } | null;
  tls?: boolean | null;
  tenantCrName?: string | null;
  domain?: string | null;
  replicas?: number | null;
  autoscaling?: { minReplicas: number; maxReplicas: number; targetCpuPercent?: number | null } | null;
  env?: { name: string; value: string; secret?: boolean | null }[] | null;
  healthCheck?: { path: string; port?: number | null; initialDelaySecs?: number | null; periodSecs?: number | null } | null;
}

const fail = (message: string): never => {
  throw new AppError(ErrorCodes.validationFailed, message);
};

/** Image references: `[registry/]path[:tag][@sha256:digest]`, no spaces, no scheme. */
const IMAGE = /^(?:[a-z0-9.-]+(?::\d+)?\/)?[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;

export function checkImage(source: AppFields['source']): string {
  if (!source || source.type !== 'image') return fail('source must be {"type": "image", "image": "<reference>"} (other source types come later)');
  const image = (source.image ?? '').trim();
  if (!IMAGE.test(image) || image.length > 512) fail('source.image must be an image reference such as nginx:1.27 or registry.example.com/team/app:v2');
  return image;
}

export function checkPort(port: number | null | undefined, field = 'port'): number {
  if (port === null || port === undefined || !Number.isInteger(port) || port < 1 || port > 65535) fail(`${field} must be an integer from 1 to 65535`);
  return port!;
}

export function checkReplicas(replicas: number, field = 'replicas'): number {
  if (!Number.isInteger(replicas) || replicas < 0 || replicas > 100) fail(`${field} must be an integer from 0 to 100`);
  return replicas;
}

export function checkResources(resources: AppFields['resources']): { cpuRequest: string; memoryRequest: string } {
  return {
    cpuRequest: checkQuantity(resources?.cpuRequest ?? '100m', 'resources.cpu_request'),
    memoryRequest: checkQuantity(resources?.memoryRequest ?? '128Mi', 'resources.memory_request'),
  };
}

const DOMAIN = /^(?=.{4,253}$)([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export function checkDomain(domain: string | null | undefined, baseDomain: string): string | null {
  if (domain === null || domain === undefined || domain.trim() === '') return null;
  const d = domain.trim().toLowerCase().replace(/\.$/, '');
  if (!DOMAIN.test(d)) fail('domain must be a fully qualified domain name such as shop.example.com');
  if (d === baseDomain || d.endsWith(`.${baseDomain}`)) fail(`domain cannot be under ${baseDomain}: addresses there are given by the platform`);
  return d;
}

export function checkAutoscaling(a: AppFields['autoscaling']): Autoscaling | null {
  if (!a) return null;
  const target = a.targetCpuPercent ?? 80;
  if (!Number.isInteger(a.minReplicas) || a.minReplicas < 1 || a.minReplicas > 100) fail('autoscaling.min_replicas must be 1 to 100');
  if (!Number.isInteger(a.maxReplicas) || a.maxReplicas < a.minReplicas || a.maxReplicas > 100) fail('autoscaling.max_replicas must be from min_replicas to 100');
  if (!Number.isInteger(target) || target < 1 || target > 100) fail('autoscaling.target_cpu_percent must be 1 to 100');
  return { minReplicas: a.minReplicas, maxReplicas: a.maxReplicas, targetCpuPercent: target };
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,254}$/;

export function checkEnv(env: AppFields['env']): { name: string; value: string; secret: boolean }[] {
  const list = env ?? [];
  if (list.length > 200) fail('env takes at most 200 variables');
  const seen = new Set<string>();
  return list.map((e, i) => {
    if (!ENV_NAME.test(e.name ?? '')) fail(`env[${i}].name must be a variable name (letters, digits, underscore; not starting with a digit)`);
    if (seen.has(e.name)) fail(`env has ${e.name} twice`);
    seen.add(e.name);
    if (typeof e.value !== 'string' || e.value.length > 32_768) fail(`env[${i}].value must be a string of at most 32 KiB`);
    return { name: e.name, value: e.value, secret: e.secret ?? false };
  });
}

export function checkHealthCheck(h: AppFields['healthCheck'], appPort: number): HealthCheck | null {
  if (!h) return null;
  if (typeof h.path !== 'string' || !h.path.startsWith('/') || h.path.length > 1024) fail('health_check.path must be an absolute path such as /healthz');
  const initial = h.initialDelaySecs ?? 5;
  const period = h.periodSecs ?? 10;
  if (!Number.isInteger(initial) || initial < 0 || initial > 3600) fail('health_check.initial_delay_secs must be 0 to 3600');
  if (!Number.isInteger(period) || period < 1 || period > 3600) fail('health_check.period_secs must be 1 to 3600');
  return { path: h.path, port: checkPort(h.port ?? appPort, 'health_check.port'), initialDelaySecs: initial, periodSecs: period };
}

export function checkAppName(name: string | null | undefined): string {
  return checkDnsLabel(name, 'name', 40);
}
