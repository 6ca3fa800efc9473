import { AppError, ErrorCodes } from './errors.js';

/** Page size when a list request names none. */
export const DEFAULT_PAGE_LIMIT = 20;
/** Largest page a list request may ask for. */
export const MAX_PAGE_LIMIT = 100;

export function pageLimit(limit: number | null | undefined): number {
  if (limit === null || limit === undefined) return DEFAULT_PAGE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw new AppError(ErrorCodes.validationFailed, `limit must be an integer between 1 and ${MAX_PAGE_LIMIT}`);
  }
  return limit;
}

/**
 * Cursors are opaque to clients: base64url of the list's name and the keyset position of the
 * last row returned. A cursor from another list, or one that was altered, is refused.
 */
export function encodeCursor(list: string, position: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify([list, ...position]), 'utf8').toString('base64url');
}

export function decodeCursor(list: string, cursor: string, shape: readonly ('string' | 'number')[]): (string | number)[] {
  const invalid = () => new AppError(ErrorCodes.invalidCursor, 'cursor is not valid for this list');
  if (!/^[A-Za-z0-9_-]{1,512}$/.test(cursor)) throw invalid();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(decoded) || decoded[0] !== list || decoded.length !== shape.length + 1) throw invalid();
  const values = decoded.slice(1);
  values.forEach((v, i) => {
    if (typeof v !== shape[i]) throw invalid();
  });
  return values as (string | number)[];
}
