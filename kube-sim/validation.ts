/**
 * What the API server refuses with 422 Invalid, for the kinds kube-sim knows: object names
 * (DNS-1123 subdomain, DNS-1123 label, DNS-1035 label), labels, and the required fields of the
 * kinds the platform writes. Messages are the API server's own, so that errors read the same.
 */
import { fromLabelSelectorObject, matchesLabels } from './selectors.js';
import { isQuantity } from './quantity.js';
import type { NameRule, ResourceType } from './resources.js';
import type { FieldError } from './status.js';
import { isPlainObject, type KubeObject } from './types.js';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

const RULES: Record<NameRule, { pattern: RegExp; max: number; message: string }> = {
  subdomain: {
    pattern: SUBDOMAIN,
    max: 253,
    message:
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  },
  label: {
    pattern: LABEL_1123,
    max: 63,
    message:
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  },
  dns1035: {
    pattern: LABEL_1035,
    max: 63,
    message:
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
  },
};

export function nameErrors(rule: NameRule, name: string, field = 'metadata.name'): FieldError[] {
  const r = RULES[rule];
  const out: FieldError[] = [];
  if (name.length > r.max) out.push({ field, type: 'Invalid value', value: name, detail: `must be no more than ${r.max} characters` });
  if (!r.pattern.test(name)) out.push({ field, type: 'Invalid value', value: name, detail: r.message });
  return out;
}

function labelErrors(labels: unknown, field: string): FieldError[] {
  if (labels === undefined) return [];
  if (!isPlainObject(labels)) return [{ field, type: 'Invalid value', value: labels, detail: 'must be a map of strings' }];
  const out: FieldError[] = [];
  for (const [key, value] of Object.entries(labels)) {
    const name = key.includes('/') ? key.slice(key.indexOf('/') + 1) : key;
    const prefix = key.includes('/') ? key.slice(0, key.indexOf('/')) : '';
    if (!QUALIFIED_NAME.test(name) || name.length > 63 || (prefix && !SUBDOMAIN.test(prefix))) {
      out.push({
        field,
        type: 'Invalid value',
        value: key,
        detail:
          "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      });
    }
    if (typeof value !== 'string' || value.length > 63 || !LABEL_VALUE.test(value)) {
      out.push({
        field,
        type: 'Invalid value',
        value,
        detail:
          "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      });
    }
  }
  return out;
}

function annotationErrors(annotations: unknown, field: string): FieldError[] {
  if (annotations === undefined) return [];
  if (!isPlainObject(annotations) || Object.values(annotations).some((v) => typeof v !== 'string')) {
    return [{ field, type: 'Invalid value', value: annotations, detail: 'annotations must be a map of strings' }];
  }
  return [];
}

function resourceListErrors(list: unknown, field: string): FieldError[] {
  if (list === undefined) return [];
  if (!isPlainObject(list)) return [{ field, type: 'Invalid value', value: list, detail: 'must be a map of quantities' }];
  return Object.entries(list)
    .filter(([, v]) => !isQuantity(v))
    .map(([k, v]) => ({
      field: `${field}[${k}]`,
      type: 'Invalid value' as const,
      value: v,
      detail: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    }));
}

function podSpecErrors(spec: unknown, field: string): FieldError[] {
  if (!isPlainObject(spec)) return [{ field, type: 'Required value' }];
  const containers = spec.containers;
  if (!Array.isArray(containers) || containers.length === 0) return [{ field: `${field}.containers`, type: 'Required value' }];
  const out: FieldError[] = [];
  const seen = new Set<string>();
  containers.forEach((c: unknown, i) => {
    const at = `${field}.containers[${i}]`;
    if (!isPlainObject(c)) {
      out.push({ field: at, type: 'Invalid value', value: c, detail: 'must be an object' });
      return;
    }
    if (typeof c.name !== 'string' || c.name === '') out.push({ field: `${at}.name`, type: 'Required value' });
    else {
      out.push(...nameErrors('label', c.name, `${at}.name`));
      if (seen.has(c.name)) out.push({ field: `${at}.name`, type: 'Duplicate value', value: c.name });
      seen.add(c.name);
    }
    if (typeof c.image !== 'string' || c.image.trim() === '') out.push({ field: `${at}.image`, type: 'Required value' });
    if (isPlainObject(c.resources)) {
      out.push(...resourceListErrors(c.resources.requests, `${at}.resources.requests`));
      out.push(...resourceListErrors(c.resources.limits, `${at}.resources.limits`));
    }
    if (Array.isArray(c.ports)) {
      c.ports.forEach((p: unknown, j) => {
        const port = isPlainObject(p) ? p.containerPort : undefined;
        if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
          out.push({ field: `${at}.ports[${j}].containerPort`, type: port === undefined ? 'Required value' : 'Invalid value', value: port, detail: port === undefined ? undefined : 'must be between 1 and 65535, inclusive' });
        }
      });
    }
  });
  return out;
}

function replicasErrors(spec: Record<string, unknown>, field: string): FieldError[] {
  const replicas = spec.replicas;
  if (replicas === undefined) return [];
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    return [{ field, type: 'Invalid value', value: replicas, detail: 'must be greater than or equal to 0' }];
  }
  return [];
}

/** A Deployment's or ReplicaSet's selector and template. */
function workloadErrors(spec: unknown): FieldError[] {
  if (!isPlainObject(spec)) return [{ field: 'spec', type: 'Required value' }];
  const out: FieldError[] = [...replicasErrors(spec, 'spec.replicas')];
  const selector = spec.selector;
  if (!isPlainObject(selector) || (Object.keys(selector.matchLabels ?? {}).length === 0 && !Array.isArray(selector.matchExpressions))) {
    out.push({ field: 'spec.selector', type: 'Required value' });
  }
  const template = spec.template;
  if (!isPlainObject(template)) {
    out.push({ field: 'spec.template', type: 'Required value' });
    return out;
  }
  const labels = isPlainObject(template.metadata) ? template.metadata.labels : undefined;
  out.push(...labelErrors(labels, 'spec.template.metadata.labels'));
  if (isPlainObject(selector) && !matchesLabels(fromLabelSelectorObject(selector), labels as Record<string, string> | undefined)) {
    out.push({ field: 'spec.template.metadata.labels', type: 'Invalid value', value: labels ?? {}, detail: '`selector` does not match template `labels`' });
  }
  out.push(...podSpecErrors(template.spec, 'spec.template.spec'));
  return out;
}

function serviceErrors(spec: unknown): FieldError[] {
  if (!isPlainObject(spec)) return [{ field: 'spec', type: 'Required value' }];
  const out: FieldError[] = [];
  const headless = spec.clusterIP === 'None';
  if (spec.type !== 'ExternalName' && !headless && (!Array.isArray(spec.ports) || spec.ports.length === 0)) out.push({ field: 'spec.ports', type: 'Required value' });
  if (Array.isArray(spec.ports)) {
    spec.ports.forEach((p: unknown, i) => {
      const port = isPlainObject(p) ? p.port : undefined;
      if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
        out.push({ field: `spec.ports[${i}].port`, type: port === undefined ? 'Required value' : 'Invalid value', value: port, detail: port === undefined ? undefined : 'must be between 1 and 65535, inclusive' });
      }
    });
  }
  return out;
}

function crdErrors(object: KubeObject): FieldError[] {
  const spec = object.spec;
  if (!isPlainObject(spec)) return [{ field: 'spec', type: 'Required value' }];
  const out: FieldError[] = [];
  const names = isPlainObject(spec.names) ? spec.names : {};
  if (typeof spec.group !== 'string' || !spec.group.includes('.')) out.push({ field: 'spec.group', type: 'Invalid value', value: spec.group, detail: 'should be a domain with at least one dot' });
  if (typeof names.plural !== 'string' || !names.plural) out.push({ field: 'spec.names.plural', type: 'Required value' });
  if (typeof names.kind !== 'string' || !names.kind) out.push({ field: 'spec.names.kind', type: 'Required value' });
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') out.push({ field: 'spec.scope', type: 'Unsupported value', value: spec.scope, detail: 'supported values: "Cluster", "Namespaced"' });
  const versions = Array.isArray(spec.versions) ? (spec.versions as unknown[]) : [];
  if (versions.length === 0) out.push({ field: 'spec.versions', type: 'Required value', detail: 'must have exactly one version marked as storage version' });
  else if (versions.filter((v) => isPlainObject(v) && v.storage === true).length !== 1) {
    out.push({ field: 'spec.versions', type: 'Invalid value', value: versions.map((v) => (isPlainObject(v) ? v.name : v)), detail: 'must have exactly one version marked as storage version' });
  }
  versions.forEach((v, i) => {
    if (!isPlainObject(v) || typeof v.name !== 'string' || !v.name) out.push({ field: `spec.versions[${i}].name`, type: 'Required value' });
  });
  if (typeof names.plural === 'string' && typeof spec.group === 'string' && object.metadata.name !== `${names.plural}.${spec.group}`) {
    out.push({ field: 'metadata.name', type: 'Invalid value', value: object.metadata.name, detail: 'must be spec.names.plural+"."+spec.group' });
  }
  return out;
}

/** Field errors of `object` as a `type`, after defaulting; empty when the API server would accept it. */
export function validateObject(type: ResourceType, object: KubeObject): FieldError[] {
  const out: FieldError[] = [...labelErrors(object.metadata.labels, 'metadata.labels'), ...annotationErrors(object.metadata.annotations, 'metadata.annotations')];
  switch (type.storageKey) {
    case 'pods':
      out.push(...podSpecErrors(object.spec, 'spec'));
      break;
    case 'deployments.apps':
    case 'replicasets.apps':
    case 'statefulsets.apps':
      out.push(...workloadErrors(object.spec));
      break;
    case 'jobs.batch':
      if (!isPlainObject(object.spec) || !isPlainObject(object.spec.template)) out.push({ field: 'spec.template', type: 'Required value' });
      else out.push(...podSpecErrors(object.spec.template.spec, 'spec.template.spec'));
      break;
    case 'cronjobs.batch':
      if (!isPlainObject(object.spec) || typeof object.spec.schedule !== 'string' || !object.spec.schedule) out.push({ field: 'spec.schedule', type: 'Required value' });
      break;
    case 'services':
      out.push(...serviceErrors(object.spec));
      break;
    case 'resourcequotas':
      if (isPlainObject(object.spec)) out.push(...resourceListErrors(object.spec.hard, 'spec.hard'));
      break;
    case 'horizontalpodautoscalers.autoscaling':
      if (!isPlainObject(object.spec) || !isPlainObject(object.spec.scaleTargetRef)) out.push({ field: 'spec.scaleTargetRef', type: 'Required value' });
      if (!isPlainObject(object.spec) || typeof object.spec.maxReplicas !== 'number' || object.spec.maxReplicas < 1) {
        out.push({ field: 'spec.maxReplicas', type: 'Invalid value', value: isPlainObject(object.spec) ? object.spec.maxReplicas : undefined, detail: 'must be greater than or equal to 1' });
      }
      break;
    case 'customresourcedefinitions.apiextensions.k8s.io':
      out.push(...crdErrors(object));
      break;
    case 'configmaps':
      if (object.data !== undefined && (!isPlainObject(object.data) || Object.values(object.data).some((v) => typeof v !== 'string'))) {
        out.push({ field: 'data', type: 'Invalid value', value: object.data, detail: 'must be a map of strings' });
      }
      break;
  }
  return out;
}
