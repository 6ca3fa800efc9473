import { Supergraph } from '@apollo/federation-internals';
import { compileRoutes } from '../../rest-facade/compileRoutes.js';
import { readSupergraph } from '../../rest-facade/createEdge.js';
import { routes, type RestRoute } from '../../rest-facade/routes/index.js';

const schema = Supergraph.build(readSupergraph()).apiSchema().toGraphQLJSSchema();

const route = (overrides: Partial<RestRoute>): RestRoute => ({
  prefix: 'platform',
  method: 'GET',
  path: '/api/v1/support/tickets/{id}',
  summary: 'test',
  operation: 'query T($id: ID!) { supportTicket(id: $id) { id } }',
  ...overrides,
});

describe('REST route table', () => {
  it('compiles every route of the product against the checked-in supergraph', () => {
    const compiled = compileRoutes(routes, schema);
    expect(compiled.length).toBe(routes.length);
    const list = compiled.find((r) => r.operationName === 'ListSupportTickets')!;
    expect(list.queryParams.map((q) => q.name)).toEqual(['limit', 'cursor', 'status', 'priority']);
    expect(list.fastifyPath).toBe('/api/v1/support/tickets');
  });

  it.each([
    ['an operation that does not parse', { operation: 'query T($id: ID!) { supportTicket(id: $id) { id }' }, /Syntax Error/],
    ['a field the supergraph lacks', { operation: 'query T($id: ID!) { supportTicket(id: $id) { nope } }' }, /Cannot query field "nope"/],
    ['a path parameter without a variable', { path: '/api/v1/things/{thingId}' }, /path parameter \{thingId\} has no variable/],
    ['an undeclared body variable', { body: 'input' }, /body variable \$input is not declared/],
    ['a required variable bound to nothing', { path: '/api/v1/x' }, /required variable \$id is not bound/],
    ['an anonymous operation', { operation: '{ platformHealth { status } }' }, /exactly one named operation/],
    ['two root fields', { operation: 'query T($id: ID!) { supportTicket(id: $id) { id } platformHealth { status } }' }, /exactly one root field/],
  ])('stops start-up on %s', (_name, overrides, message) => {
    expect(() => compileRoutes([route(overrides)], schema)).toThrow(message);
  });

  it('refuses a route defined twice', () => {
    expect(() => compileRoutes([route({}), route({})], schema)).toThrow(/defined twice/);
  });
});
