/**
 * autocannon's `verifyBody` for `npm run bench -- apps`, handed to its worker thread by path (see
 * apps-create.ts): an answer is right only when it is one app as the REST facade shows it (an id,
 * a name, a CloudSpace, a phase); anything else (an error body, a page, GraphQL errors) counts as
 * a mismatch, which fails the run. Whether a create answered 201 rather than another 2xx is
 * checked once before the runs (a create answers 201 or an error, never 200).
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isApp(body: string): boolean {
  let app: unknown;
  try {
    app = JSON.parse(body);
  } catch {
    return false;
  }
  if (app === null || typeof app !== 'object' || Array.isArray(app)) return false;
  const { id, name, cloudspace_id: cloudspaceId, phase } = app as Record<string, unknown>;
  return typeof id === 'string' && UUID.test(id) && typeof cloudspaceId === 'string' && UUID.test(cloudspaceId) && typeof name === 'string' && name.length > 0 && typeof phase === 'string';
}

export { isApp as 'module.exports' };
