/** REST speaks snake_case (spec: `next_cursor`, `tenant_id`); GraphQL speaks camelCase. */
/** Field names repeat on every response: convert each once. */
function memoised(convert: (key: string) => string): (key: string) => string {
  const cache = new Map<string, string>();
  return (key) => {
    let out = cache.get(key);
    if (out === undefined) {
      out = convert(key);
      if (cache.size < 10_000) cache.set(key, out);
    }
    return out;
  };
}

export const toSnakeKey = memoised((key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
export const toCamelKey = memoised((key) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()));

function convert(value: unknown, keyOf: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => convert(v, keyOf));
  // GraphQL results are null-prototype objects; request bodies are plain ones.
  const proto = value !== null && typeof value === 'object' ? Object.getPrototypeOf(value) : undefined;
  if (proto === Object.prototype || proto === null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as object)) out[keyOf(k)] = convert(v, keyOf);
    return out;
  }
  return value;
}

export const snakeKeys = (value: unknown): unknown => convert(value, toSnakeKey);
export const camelKeys = (value: unknown): unknown => convert(value, toCamelKey);

/**
 * GraphQL's input-coercion messages name variables and camelCase paths
 * (`Variable "$input" got invalid value "x" at "input.dueAt"; ...`). REST clients sent a JSON
 * body with snake_case keys, so say it in their terms: `due_at: ...`.
 */
export function restInputMessage(message: string, bodyVariable: string | undefined): string {
  const match = /^Variable "\$(\w+)" got invalid value .*?(?: at "([\w.[\]]+)")?; (.*)$/s.exec(message);
  if (!match) return message;
  const [, variable, path, reason] = match;
  const field = path?.split('.').slice(variable === bodyVariable ? 1 : 0).map(toSnakeKey).join('.');
  const fixed = (reason ?? '').replace(/Field "(\w+)"/g, (_, name: string) => `Field "${toSnakeKey(name)}"`);
  return field ? `${field}: ${fixed}` : fixed;
}
