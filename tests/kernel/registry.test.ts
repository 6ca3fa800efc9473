import { AppError, ErrorCodes, isUuid, listErrorCodes, resolveErrorCode } from '../../kernel/errors.js';
import { decodeCursor, encodeCursor, pageLimit } from '../../kernel/pagination.js';
import { requestIdFrom } from '../../kernel/http.js';
import { restInputMessage, snakeKeys, camelKeys } from '../../rest-facade/casing.js';

describe('error-code registry', () => {
  it('defines each code once with a status and a description', () => {
    const codes = listErrorCodes();
    expect(new Set(codes.map((c) => c.code)).size).toBe(codes.length);
    for (const c of codes) {
      expect(c.status).toBeGreaterThanOrEqual(400);
      expect(c.description.length).toBeGreaterThan(10);
    }
    expect(codes.find((c) => c.code === 'not_found')?.status).toBe(404);
  });

  it('maps library codes onto ours and unknown ones to internal_error', () => {
    expect(resolveErrorCode('BAD_USER_INPUT')).toBe(ErrorCodes.validationFailed);
    expect(resolveErrorCode('GRAPHQL_PARSE_FAILED')).toBe(ErrorCodes.badRequest);
    expect(resolveErrorCode('not_found')).toBe(ErrorCodes.notFound);
    expect(resolveErrorCode('SOMETHING_ELSE')).toBe(ErrorCodes.internal);
    expect(resolveErrorCode(undefined)).toBe(ErrorCodes.internal);
  });

  it('carries the code in GraphQL extensions', () => {
    const error = new AppError(ErrorCodes.conflict, 'busy');
    expect(error.extensions.code).toBe('conflict');
    expect(error.status).toBe(409);
  });

  it('recognises UUIDs', () => {
    expect(isUuid('0a000000-0000-4000-8000-00000000000a')).toBe(true);
    expect(isUuid('0a000000-0000-4000-8000-00000000000a; drop table')).toBe(false);
  });
});

describe('pagination', () => {
  it('round-trips a cursor and refuses one of another list or an altered one', () => {
    const cursor = encodeCursor('tickets', ['2026-11-21T00:00:00.000Z', 'abc']);
    expect(decodeCursor('tickets', cursor, ['string', 'string'])).toEqual(['2026-11-21T00:00:00.000Z', 'abc']);
    expect(() => decodeCursor('apps', cursor, ['string', 'string'])).toThrow(/cursor/);
    expect(() => decodeCursor('tickets', `${cursor}x`, ['string', 'string'])).toThrow(/cursor/);
    expect(() => decodeCursor('tickets', '!!!', ['string', 'string'])).toThrow(/cursor/);
    expect(() => decodeCursor('tickets', encodeCursor('tickets', [1, 'a']), ['string', 'string'])).toThrow(/cursor/);
  });

  it('bounds the page size', () => {
    expect(pageLimit(undefined)).toBe(20);
    expect(pageLimit(100)).toBe(100);
    expect(() => pageLimit(0)).toThrow(/limit/);
    expect(() => pageLimit(101)).toThrow(/limit/);
    expect(() => pageLimit(2.5)).toThrow(/limit/);
  });
});

describe('request ids', () => {
  it('keeps sane ids and replaces others', () => {
    expect(requestIdFrom('abc-123')).toBe('abc-123');
    expect(requestIdFrom(['first', 'second'])).toBe('first');
    expect(requestIdFrom('x'.repeat(129))).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdFrom('<script>')).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdFrom(undefined)).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('REST casing', () => {
  it('converts keys both ways, including null-prototype GraphQL results', () => {
    const result = Object.assign(Object.create(null), { nextCursor: null, data: [Object.assign(Object.create(null), { tenantId: 't', resolvedAt: null })] });
    expect(snakeKeys(result)).toEqual({ next_cursor: null, data: [{ tenant_id: 't', resolved_at: null }] });
    expect(camelKeys({ cloudspace_id: 'c', health_check: { initial_delay_secs: 3 } })).toEqual({ cloudspaceId: 'c', healthCheck: { initialDelaySecs: 3 } });
  });

  it('rewrites GraphQL coercion messages in REST terms', () => {
    expect(restInputMessage('Variable "$input" got invalid value "x" at "input.dueAt"; Value "x" is bad.', 'input')).toBe('due_at: Value "x" is bad.');
    expect(restInputMessage('Variable "$input" got invalid value {}; Field "dueAt" of required type "String!" was not provided.', 'input')).toBe('Field "due_at" of required type "String!" was not provided.');
    expect(restInputMessage('something else', 'input')).toBe('something else');
  });
});
