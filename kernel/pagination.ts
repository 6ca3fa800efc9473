import type { EntityName, FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
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

/** A list answer: the pagination envelope of spec part 2. */
export interface PageOfRows<T> {
  data: T[];
  nextCursor: string | null;
  total: number;
}

/**
 * One page of rows newest first, by keyset on (createdAt, id): stable under inserts, and no
 * OFFSET scans. `where` filters both the page and the total; the cursor names the list it
 * belongs to, so a cursor of another list is refused. Timestamps are set by the application
 * (millisecond precision), so the cursor's ISO time matches stored values exactly.
 */
export async function pageNewestFirst<T extends { id: string; createdAt: Date }>(
  em: EntityManager,
  entity: EntityName<T>,
  list: string,
  where: Record<string, unknown>,
  args: { limit?: number | null | undefined; cursor?: string | null | undefined },
  populate?: readonly string[],
): Promise<PageOfRows<T>> {
  const limit = pageLimit(args.limit);
  const keyset: Record<string, unknown> = {};
  if (args.cursor) {
    const [createdAt, id] = decodeCursor(list, args.cursor, ['string', 'string']) as [string, string];
    const at = new Date(createdAt);
    if (Number.isNaN(at.getTime())) throw new AppError(ErrorCodes.invalidCursor, 'cursor is not valid for this list');
    keyset.$or = [{ createdAt: { $lt: at } }, { createdAt: at, id: { $lt: id } }];
  }
  const [rows, total] = await Promise.all([
    em.find(entity, { ...where, ...keyset } as FilterQuery<T>, {
      orderBy: { createdAt: 'desc', id: 'desc' } as never,
      limit: limit + 1,
      ...(populate ? { populate: populate as never } : {}),
    }) as Promise<T[]>,
    em.count(entity, where as FilterQuery<T>),
  ]);
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, total, nextCursor: rows.length > limit && last ? encodeCursor(list, [last.createdAt.toISOString(), last.id]) : null };
}
