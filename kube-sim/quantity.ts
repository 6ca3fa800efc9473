/**
 * Kubernetes resource quantities (k8s.io/apimachinery `resource.Quantity`): `500m`, `1.5`,
 * `128Mi`, `1G`, `2e3`. Parsed to a plain number of base units (cores, bytes, pods), which is
 * precise enough for quota arithmetic on the sizes a simulator sees.
 */

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;

export class QuantityError extends Error {
  constructor(readonly value: string) {
    super(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
    this.name = 'QuantityError';
  }
}

/** The quantity in base units; throws {@link QuantityError} for what the API server refuses. */
export function parseQuantity(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new QuantityError(String(value));
    return value;
  }
  const match = QUANTITY.exec(value.trim());
  if (!match) throw new QuantityError(value);
  const number = Number(match[1]);
  const suffix = match[2] ?? '';
  if (suffix in BINARY) return number * BINARY[suffix]!;
  if (suffix in DECIMAL) return number * DECIMAL[suffix]!;
  // An exponent: 1e3, 5E-2.
  return number * 10 ** Number(suffix.slice(1));
}

export function isQuantity(value: unknown): boolean {
  if (typeof value !== 'string' && typeof value !== 'number') return false;
  try {
    parseQuantity(value);
    return true;
  } catch {
    return false;
  }
}

/** CPU as the API server prints it: whole cores as `2`, the rest in millicores (`1500m`). */
export function formatCpu(cores: number): string {
  const milli = Math.round(cores * 1000);
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

/** Bytes in the largest binary unit that divides them exactly (`512Mi`, `2Gi`), else plain. */
export function formatMemory(bytes: number): string {
  const whole = Math.round(bytes);
  if (whole === 0) return '0';
  for (const [suffix, size] of [
    ['Ti', 2 ** 40],
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10],
  ] as const) {
    if (whole % size === 0) return `${whole / size}${suffix}`;
  }
  return String(whole);
}

/** A count or any other quantity: integers plainly, fractions in milli-units. */
export function formatQuantity(resource: string, value: number): string {
  if (/cpu$/.test(resource)) return formatCpu(value);
  if (/memory$|storage$/.test(resource)) return formatMemory(value);
  return Number.isInteger(value) ? String(value) : `${Math.round(value * 1000)}m`;
}
