/**
 * A minimal OpenAPI v3 publication (`/openapi/v3` and one document per group-version): for every
 * resource, its paths with the `x-kubernetes-group-version-kind` extension and the
 * `fieldValidation` parameter. That is what kubectl looks for to learn that the server validates
 * fields itself, so `kubectl apply` works without client-side schemas. Schemas are not
 * published (no `kubectl explain`).
 */
import { createHash } from 'node:crypto';
import type { ResourceRegistry, ResourceType } from './resources.js';

function groupVersionPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/** `GET /openapi/v3`: the group-versions and where their documents are. */
export function openApiRoot(registry: ResourceRegistry, groupVersions: { group: string; version: string }[]): unknown {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const { group, version } of groupVersions) {
    const path = groupVersionPath(group, version);
    const hash = createHash('sha256').update(JSON.stringify(registry.resourceList(group, version))).digest('hex').slice(0, 32).toUpperCase();
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
  }
  return { paths };
}

const PARAMETERS = [
  { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
  { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
  { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
];

/** `GET /openapi/v3/api/v1`, `/openapi/v3/apis/{group}/{version}`. */
export function openApiGroupVersion(types: ResourceType[], group: string, version: string): unknown {
  const paths: Record<string, unknown> = {};
  for (const t of types) {
    if (t.group !== group || t.version !== version || t.virtual) continue;
    const gvk = { group: t.group, version: t.version, kind: t.kind };
    const base = `/${groupVersionPath(group, version)}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.plural}`;
    const operation = (verb: string) => ({ 'x-kubernetes-action': verb, 'x-kubernetes-group-version-kind': gvk, parameters: PARAMETERS, responses: { '200': { description: 'OK' } } });
    paths[base] = { post: operation('post'), get: operation('list') };
    paths[`${base}/{name}`] = { get: operation('get'), put: operation('put'), patch: operation('patch'), delete: operation('delete') };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes (kube-sim)', version: 'v1.31.0-kube-sim' }, paths, components: { schemas: {} } };
}
