/**
 * Label and field selectors, with the grammar of k8s.io/apimachinery `pkg/labels` and
 * `pkg/fields`: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>3`, `a<3`
 * for labels; `path=value`, `path==value`, `path!=value` for fields.
 */
import { errors } from './status.js';
import { isPlainObject, type KubeObject } from './types.js';

export type LabelOperator = 'exists' | '!exists' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

export type LabelSelector = readonly LabelRequirement[];

const KEY = String.raw`[A-Za-z0-9](?:[-A-Za-z0-9_./]*[A-Za-z0-9])?`;
const VALUE = String.raw`(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?`;
const EXISTS = new RegExp(`^(${KEY})$`);
const NOT_EXISTS = new RegExp(`^!\\s*(${KEY})$`);
const EQUALITY = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`);
const SET = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`);
const COMPARE = new RegExp(`^(${KEY})\\s*(>|<)\\s*(-?\\d+)$`);
const VALUE_ONLY = new RegExp(`^${VALUE}$`);

/** Splits on commas outside parentheses. */
function splitTopLevel(input: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of input) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth -= 1;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

/** Parses `labelSelector`; an empty string selects everything. Throws a 400 Status when malformed. */
export function parseLabelSelector(input: string | undefined | null): LabelSelector {
  if (!input || !input.trim()) return [];
  return splitTopLevel(input).map((raw) => {
    const part = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = NOT_EXISTS.exec(part))) return { key: m[1]!, operator: '!exists', values: [] };
    if ((m = SET.exec(part))) {
      const values = m[3]!
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      if (values.some((v) => !VALUE_ONLY.test(v))) throw errors.badRequest(`unable to parse requirement: values of "${m[1]}" are not valid label values`);
      return { key: m[1]!, operator: m[2] as 'in' | 'notin', values };
    }
    if ((m = EQUALITY.exec(part))) return { key: m[1]!, operator: m[2] === '!=' ? '!=' : '=', values: [m[3]!] };
    if ((m = COMPARE.exec(part))) return { key: m[1]!, operator: m[2] === '>' ? 'gt' : 'lt', values: [m[3]!] };
    if ((m = EXISTS.exec(part))) return { key: m[1]!, operator: 'exists', values: [] };
    throw errors.badRequest(`unable to parse requirement: found '${part}', expected a label requirement such as 'key=value', 'key in (a,b)' or '!key'`);
  });
}

export function matchesLabels(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  for (const r of selector) {
    const has = labels !== undefined && Object.hasOwn(labels, r.key);
    const value = has ? labels![r.key]! : undefined;
    switch (r.operator) {
      case 'exists':
        if (!has) return false;
        break;
      case '!exists':
        if (has) return false;
        break;
      case '=':
        if (value !== r.values[0]) return false;
        break;
      case '!=':
        if (value === r.values[0]) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(value!)) return false;
        break;
      case 'notin':
        if (has && r.values.includes(value!)) return false;
        break;
      case 'gt':
      case 'lt': {
        const n = Number(value);
        if (!has || !Number.isInteger(n)) return false;
        if (r.operator === 'gt' ? !(n > Number(r.values[0])) : !(n < Number(r.values[0]))) return false;
        break;
      }
    }
  }
  return true;
}

/** A `metav1.LabelSelector` (`matchLabels`, `matchExpressions`) as requirements. */
export function fromLabelSelectorObject(selector: unknown): LabelSelector {
  if (!isPlainObject(selector)) return [];
  const out: LabelRequirement[] = [];
  if (isPlainObject(selector.matchLabels)) {
    for (const [key, value] of Object.entries(selector.matchLabels)) out.push({ key, operator: '=', values: [String(value)] });
  }
  if (Array.isArray(selector.matchExpressions)) {
    for (const e of selector.matchExpressions as { key: string; operator: string; values?: string[] }[]) {
      const operator = ({ In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!exists' } as const)[e.operator as 'In'];
      if (operator) out.push({ key: e.key, operator, values: e.values ?? [] });
    }
  }
  return out;
}

/** The string form of a selector, as `Scale.status.selector` carries it. */
export function formatLabelSelector(selector: LabelSelector): string {
  return selector
    .map((r) => {
      switch (r.operator) {
        case 'exists':
          return r.key;
        case '!exists':
          return `!${r.key}`;
        case '=':
        case '!=':
          return `${r.key}${r.operator}${r.values[0]}`;
        case 'in':
        case 'notin':
          return `${r.key} ${r.operator} (${r.values.join(',')})`;
        case 'gt':
          return `${r.key}>${r.values[0]}`;
        case 'lt':
          return `${r.key}<${r.values[0]}`;
      }
    })
    .join(',');
}

export interface FieldRequirement {
  path: string[];
  field: string;
  negate: boolean;
  value: string;
}

export type FieldSelector = readonly FieldRequirement[];

/** Splits on commas not escaped with a backslash, then unescapes `\,`, `\=` and `\\`. */
function splitEscaped(input: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < input.length; i += 1) {
    const ch = input[i]!;
    if (ch === '\\' && i + 1 < input.length) {
      current += ch + input[i + 1]!;
      i += 1;
    } else if (ch === separator) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

const unescape = (s: string): string => s.replace(/\\(.)/g, '$1');

/**
 * Parses `fieldSelector`. Any dotted path of the object can be selected on (the API server
 * allows only a few per kind: `metadata.name`, `metadata.namespace`, `status.phase`,
 * `spec.nodeName`, `involvedObject.*`...); a missing field compares as the empty string.
 */
export function parseFieldSelector(input: string | undefined | null): FieldSelector {
  if (!input || !input.trim()) return [];
  return splitEscaped(input, ',').map((raw) => {
    const part = raw.trim();
    const m = /^([A-Za-z0-9_.]+)\s*(==|=|!=)(.*)$/.exec(part);
    if (!m) throw errors.badRequest(`invalid selector: '${input}'; can't understand '${part}'`);
    return { field: m[1]!, path: m[1]!.split('.'), negate: m[2] === '!=', value: unescape(m[3]!.trim()) };
  });
}

function fieldValue(object: KubeObject, path: readonly string[]): string {
  let current: unknown = object;
  for (const key of path) {
    if (!isPlainObject(current)) return '';
    current = current[key];
  }
  if (current === undefined || current === null) return '';
  return typeof current === 'object' ? JSON.stringify(current) : String(current);
}

export function matchesFields(selector: FieldSelector, object: KubeObject): boolean {
  for (const r of selector) {
    const equal = fieldValue(object, r.path) === r.value;
    if (equal === r.negate) return false;
  }
  return true;
}

/** `metadata.name=x` in a field selector: lets a list or watch go straight to one object. */
export function selectedName(selector: FieldSelector): string | undefined {
  return selector.find((r) => r.field === 'metadata.name' && !r.negate)?.value;
}
