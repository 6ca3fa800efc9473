/**
 * The patch formats of the Kubernetes API: JSON merge patch (RFC 7386), JSON patch (RFC 6902)
 * and strategic merge patch, the latter driven by a table of merge keys per list path
 * (`spec.template.spec.containers` merged by `name`, ...) instead of Go struct tags.
 */
import { isPlainObject } from './types.js';

/** A patch that does not apply to the object (answered 422) or is malformed (answered 400). */
export class PatchError extends Error {
  constructor(
    message: string,
    readonly malformed = false,
  ) {
    super(message);
    this.name = 'PatchError';
  }
}

/** RFC 7386: objects merge recursively, `null` removes, everything else (lists too) replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// RFC 6902

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchError(`invalid JSON pointer "${pointer}": must start with "/"`, true);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(list: unknown[], token: string, allowEnd: boolean, pointer: string): number {
  if (token === '-' && allowEnd) return list.length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new PatchError(`invalid array index "${token}" in "${pointer}"`);
  const index = Number(token);
  if (index > list.length || (!allowEnd && index === list.length)) throw new PatchError(`array index ${index} out of bounds in "${pointer}"`);
  return index;
}

/** The container holding the pointer's last token, walking (and copying) along the way. */
function parentOf(root: unknown, tokens: string[], pointer: string): unknown {
  let current = root;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(current)) current = current[arrayIndex(current, token, false, pointer)];
    else if (isPlainObject(current) && Object.hasOwn(current, token)) current = current[token];
    else throw new PatchError(`doc is missing path: "${pointer}": missing value`);
  }
  return current;
}

function getAt(root: unknown, pointer: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return root;
  const parent = parentOf(root, tokens, pointer);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) return parent[arrayIndex(parent, last, false, pointer)];
  if (isPlainObject(parent) && Object.hasOwn(parent, last)) return parent[last];
  throw new PatchError(`doc is missing path: "${pointer}": missing value`);
}

function removeAt(root: unknown, pointer: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw new PatchError('cannot remove the whole document');
  const parent = parentOf(root, tokens, pointer);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, last, false, pointer), 1)[0];
  if (isPlainObject(parent) && Object.hasOwn(parent, last)) {
    const value = parent[last];
    delete parent[last];
    return value;
  }
  throw new PatchError(`jsonpatch remove operation does not apply: doc is missing path: "${pointer}"`);
}

function addAt(root: unknown, pointer: string, value: unknown, replace: boolean): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const parent = parentOf(root, tokens, pointer);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const index = arrayIndex(parent, last, !replace, pointer);
    if (replace) parent[index] = value;
    else parent.splice(index, 0, value);
  } else if (isPlainObject(parent)) {
    if (replace && !Object.hasOwn(parent, last)) throw new PatchError(`jsonpatch replace operation does not apply: doc is missing key: "${pointer}"`);
    parent[last] = value;
  } else {
    throw new PatchError(`jsonpatch ${replace ? 'replace' : 'add'} operation does not apply: doc is missing path: "${pointer}"`);
  }
  return root;
}

/** RFC 6902 on a copy of `document`. */
export function jsonPatch(document: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw new PatchError('a JSON patch must be a JSON array of operations', true);
  let doc = structuredClone(document);
  for (const raw of operations) {
    if (!isPlainObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') throw new PatchError(`invalid JSON patch operation: ${JSON.stringify(raw)}`, true);
    const op = raw as unknown as Operation;
    switch (op.op) {
      case 'add':
        doc = addAt(doc, op.path, structuredClone(op.value), false);
        break;
      case 'remove':
        removeAt(doc, op.path);
        break;
      case 'replace':
        doc = addAt(doc, op.path, structuredClone(op.value), true);
        break;
      case 'move': {
        if (op.from === undefined) throw new PatchError('"move" operation needs "from"', true);
        const value = removeAt(doc, op.from);
        doc = addAt(doc, op.path, value, false);
        break;
      }
      case 'copy': {
        if (op.from === undefined) throw new PatchError('"copy" operation needs "from"', true);
        doc = addAt(doc, op.path, structuredClone(getAt(doc, op.from)), false);
        break;
      }
      case 'test': {
        const actual = getAt(doc, op.path);
        if (JSON.stringify(canonical(actual)) !== JSON.stringify(canonical(op.value))) throw new PatchError(`testing value ${op.path} failed: test operation failed`);
        break;
      }
      default:
        throw new PatchError(`unexpected JSON patch operation "${op.op}"`, true);
    }
  }
  return doc;
}

/** A value with object keys sorted, so that equal values stringify equally. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = canonical(value[key]);
    return out;
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Strategic merge patch

/**
 * Merge keys by list path: `spec.template.spec.containers` → `name`. A list item's children
 * are under `<list path>[]`, e.g. `spec.template.spec.containers[].env`. Lists not named here
 * are replaced, as lists without a patch strategy are.
 */
export type MergeKeys = ReadonlyMap<string, string>;

/** The merge keys of a PodSpec found at `prefix` (e.g. `spec.template.spec`). */
export function podSpecMergeKeys(prefix: string): [string, string][] {
  const keys: [string, string][] = [
    ['containers', 'name'],
    ['initContainers', 'name'],
    ['ephemeralContainers', 'name'],
    ['volumes', 'name'],
    ['imagePullSecrets', 'name'],
    ['hostAliases', 'ip'],
    ['topologySpreadConstraints', 'topologyKey'],
  ];
  const perContainer: [string, string][] = [
    ['env', 'name'],
    ['ports', 'containerPort'],
    ['volumeMounts', 'mountPath'],
    ['volumeDevices', 'devicePath'],
    ['resizePolicy', 'resourceName'],
  ];
  const out: [string, string][] = keys.map(([path, key]) => [`${prefix}.${path}`, key]);
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
    for (const [path, key] of perContainer) out.push([`${prefix}.${list}[].${path}`, key]);
  }
  return out;
}

/** Keys every object shares. */
export const METADATA_MERGE_KEYS: [string, string][] = [['metadata.ownerReferences', 'uid']];

const DIRECTIVE_PREFIXES = ['$setElementOrder/', '$retainKeys', '$deleteFromPrimitiveList/'];

function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => !(isPlainObject(v) && v.$patch !== undefined && Object.keys(v).length === 1)).map(stripDirectives);
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '$patch' || DIRECTIVE_PREFIXES.some((p) => k.startsWith(p))) continue;
      if (v === null) continue;
      out[k] = stripDirectives(v);
    }
    return out;
  }
  return value;
}

function mergeList(original: unknown[], patch: unknown[], key: string, itemPath: string, keys: MergeKeys): unknown[] {
  if (patch.some((p) => isPlainObject(p) && p.$patch === 'replace')) return stripDirectives(patch) as unknown[];
  const out = original.slice();
  for (const item of patch) {
    if (!isPlainObject(item)) throw new PatchError(`the list at ${itemPath.slice(0, -2)} is merged by "${key}": its items must be objects`, true);
    if (item[key] === undefined) throw new PatchError(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`, true);
    const index = out.findIndex((o) => isPlainObject(o) && o[key] === item[key]);
    if (item.$patch === 'delete') {
      if (index >= 0) out.splice(index, 1);
      continue;
    }
    if (index >= 0) out[index] = strategicObject(out[index] as Record<string, unknown>, item, itemPath, keys);
    else out.push(stripDirectives(item));
  }
  return out;
}

function strategicObject(original: Record<string, unknown> | undefined, patch: Record<string, unknown>, path: string, keys: MergeKeys): Record<string, unknown> {
  if (patch.$patch === 'replace') return stripDirectives(patch) as Record<string, unknown>;
  const result: Record<string, unknown> = { ...(original ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key.startsWith('$setElementOrder/') || key === '$retainKeys') continue;
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      const field = key.slice('$deleteFromPrimitiveList/'.length);
      if (Array.isArray(result[field]) && Array.isArray(value)) result[field] = (result[field] as unknown[]).filter((v) => !value.includes(v));
      continue;
    }
    const childPath = path ? `${path}.${key}` : key;
    if (value === null) {
      delete result[key];
    } else if (isPlainObject(value)) {
      if (value.$patch === 'delete') delete result[key];
      else result[key] = strategicObject(isPlainObject(result[key]) ? result[key] : undefined, value, childPath, keys);
    } else if (Array.isArray(value)) {
      const mergeKey = keys.get(childPath);
      result[key] = mergeKey && Array.isArray(result[key]) ? mergeList(result[key] as unknown[], value, mergeKey, `${childPath}[]`, keys) : stripDirectives(value);
    } else {
      result[key] = value;
    }
  }
  return result;
}

/** A strategic merge patch of `target` (an object) with `patch`, returning a new object. */
export function strategicMergePatch(target: Record<string, unknown>, patch: unknown, keys: MergeKeys): Record<string, unknown> {
  if (!isPlainObject(patch)) throw new PatchError('a strategic merge patch must be a JSON object', true);
  return strategicObject(target, patch, '', keys);
}

// ---------------------------------------------------------------------------------------------
// Server-side apply, approximated

/**
 * Removes from `live` what a field manager applied last time (`previous`) and no longer applies
 * (`next`): map keys, and items of keyed lists. Merging `next` onto the result then gives what
 * server-side apply gives a single manager: fields it stopped applying go away, fields other
 * writers set stay. Lists without a merge key are replaced by the merge anyway.
 */
export function pruneUnapplied(live: unknown, previous: unknown, next: unknown, keys: MergeKeys | null, path = ''): unknown {
  if (!isPlainObject(live) || !isPlainObject(previous)) return live;
  const nextMap = isPlainObject(next) ? next : {};
  const out: Record<string, unknown> = { ...live };
  for (const [key, before] of Object.entries(previous)) {
    if (key.startsWith('$')) continue;
    const childPath = path ? `${path}.${key}` : key;
    if (!Object.hasOwn(nextMap, key)) {
      // The object's identity is never the applier's to drop.
      if (path === '' && (key === 'metadata' || key === 'apiVersion' || key === 'kind')) continue;
      delete out[key];
      continue;
    }
    const after = nextMap[key];
    if (isPlainObject(before) && isPlainObject(after)) {
      out[key] = pruneUnapplied(out[key], before, after, keys, childPath);
    } else if (Array.isArray(before) && Array.isArray(after) && Array.isArray(out[key])) {
      const mergeKey = keys?.get(childPath);
      if (!mergeKey) continue;
      const keyOf = (item: unknown) => (isPlainObject(item) ? item[mergeKey] : undefined);
      const kept = new Set(after.map(keyOf));
      const previousItems = new Map(before.map((item) => [keyOf(item), item]));
      out[key] = (out[key] as unknown[])
        .filter((item) => !(previousItems.has(keyOf(item)) && !kept.has(keyOf(item))))
        .map((item) => {
          const k = keyOf(item);
          return previousItems.has(k) ? pruneUnapplied(item, previousItems.get(k), after.find((a) => keyOf(a) === k), keys, `${childPath}[]`) : item;
        });
    }
  }
  return out;
}
