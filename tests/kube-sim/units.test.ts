/** kube-sim's pure parts: quantities, selectors, the patch formats, template hashes, image triggers. */
import { imageBehaviour } from '../../kube-sim/controllers/kubelet.js';
import { templateHash } from '../../kube-sim/controllers/deployment.js';
import { jsonPatch, mergePatch, PatchError, podSpecMergeKeys, pruneUnapplied, strategicMergePatch } from '../../kube-sim/patch.js';
import { formatCpu, formatMemory, parseQuantity, QuantityError } from '../../kube-sim/quantity.js';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from '../../kube-sim/selectors.js';
import { StatusError } from '../../kube-sim/status.js';

describe('quantities', () => {
  it.each([
    ['500m', 0.5],
    ['2', 2],
    ['1.5', 1.5],
    ['100n', 1e-7],
    ['1k', 1000],
    ['1M', 1e6],
    ['1G', 1e9],
    ['1Ki', 1024],
    ['128Mi', 128 * 2 ** 20],
    ['2Gi', 2 * 2 ** 30],
    ['1e3', 1000],
    ['.5', 0.5],
  ])('parses %s', (text, value) => {
    expect(parseQuantity(text)).toBeCloseTo(value, 12);
  });

  it('refuses what is not a quantity', () => {
    for (const bad of ['', 'abc', '1Qi', '1 Gi', '--1']) expect(() => parseQuantity(bad)).toThrow(QuantityError);
  });

  it('formats cpu and memory as the API server prints them', () => {
    expect(formatCpu(0.75)).toBe('750m');
    expect(formatCpu(2)).toBe('2');
    expect(formatMemory(640 * 2 ** 20)).toBe('640Mi');
    expect(formatMemory(2 ** 30)).toBe('1Gi');
    expect(formatMemory(1000)).toBe('1000');
  });
});

describe('selectors', () => {
  const labels = { app: 'web', env: 'prod', 'example.com/tier': 'front' };
  it.each([
    ['', true],
    ['app=web', true],
    ['app = web', true],
    ['app==api', false],
    ['app!=api', true],
    ['missing!=x', true],
    ['env in (prod, staging)', true],
    ['env notin (prod)', false],
    ['example.com/tier', true],
    ['!example.com/tier', false],
    ['!missing', true],
    ['app=web,env in (dev)', false],
  ])('%s', (selector, expected) => {
    expect(matchesLabels(parseLabelSelector(selector), labels)).toBe(expected);
  });

  it('refuses malformed selectors with a 400 Status', () => {
    for (const bad of ['app in web', '=x', 'app=(x)']) {
      try {
        parseLabelSelector(bad);
        throw new Error(`accepted ${bad}`);
      } catch (error) {
        expect(error).toBeInstanceOf(StatusError);
        expect((error as StatusError).code).toBe(400);
      }
    }
  });

  it('matches field selectors on any dotted path, with escapes', () => {
    const event = { metadata: { name: 'a,b', namespace: 'ns' }, involvedObject: { kind: 'Pod', name: 'web-1' }, count: 2 };
    expect(matchesFields(parseFieldSelector('involvedObject.kind=Pod,involvedObject.name=web-1'), event)).toBe(true);
    expect(matchesFields(parseFieldSelector('metadata.name=a\\,b'), event)).toBe(true);
    expect(matchesFields(parseFieldSelector('count=2'), event)).toBe(true);
    expect(matchesFields(parseFieldSelector('metadata.namespace!=ns'), event)).toBe(false);
    expect(matchesFields(parseFieldSelector('spec.nodeName='), event)).toBe(true);
  });
});

describe('patches', () => {
  it('merge patch follows RFC 7386 examples', () => {
    expect(mergePatch({ a: 'b' }, { a: 'c' })).toEqual({ a: 'c' });
    expect(mergePatch({ a: 'b' }, { b: 'c' })).toEqual({ a: 'b', b: 'c' });
    expect(mergePatch({ a: 'b' }, { a: null })).toEqual({});
    expect(mergePatch({ a: ['b'] }, { a: 'c' })).toEqual({ a: 'c' });
    expect(mergePatch({ a: { b: 'c' } }, { a: { b: 'd', c: null } })).toEqual({ a: { b: 'd' } });
    expect(mergePatch({ a: [{ b: 'c' }] }, { a: [1] })).toEqual({ a: [1] });
    expect(mergePatch(['a', 'b'], ['c', 'd'])).toEqual(['c', 'd']);
    expect(mergePatch({ e: null }, { a: 1 })).toEqual({ e: null, a: 1 });
  });

  it('JSON patch follows RFC 6902, on a copy', () => {
    const doc = { foo: ['bar', 'baz'], 'a/b': 1, 'm~n': 2 };
    const out = jsonPatch(doc, [
      { op: 'add', path: '/foo/1', value: 'qux' },
      { op: 'add', path: '/foo/-', value: 'end' },
      { op: 'replace', path: '/a~1b', value: 10 },
      { op: 'move', from: '/m~0n', path: '/moved' },
      { op: 'test', path: '/foo/0', value: 'bar' },
    ]);
    expect(out).toEqual({ foo: ['bar', 'qux', 'baz', 'end'], 'a/b': 10, moved: 2 });
    expect(doc.foo).toEqual(['bar', 'baz']);
    expect(() => jsonPatch(doc, [{ op: 'replace', path: '/nope', value: 1 }])).toThrow(PatchError);
    expect(() => jsonPatch(doc, [{ op: 'remove', path: '/foo/9' }])).toThrow(PatchError);
    expect(() => jsonPatch(doc, { op: 'add' })).toThrow(PatchError);
  });

  it('strategic merge patch merges keyed lists and honours $patch directives', () => {
    const keys = new Map(podSpecMergeKeys('spec'));
    const pod = {
      spec: {
        containers: [
          { name: 'a', image: 'a:1', env: [{ name: 'X', value: '1' }], ports: [{ containerPort: 80 }] },
          { name: 'b', image: 'b:1' },
        ],
        tolerations: [{ key: 'old' }],
      },
    };
    const out = strategicMergePatch(
      pod,
      {
        spec: {
          containers: [
            { name: 'a', env: [{ name: 'Y', value: '2' }, { name: 'X', $patch: 'delete' }], ports: [{ containerPort: 443 }] },
            { name: 'c', image: 'c:1' },
            { name: 'b', $patch: 'delete' },
          ],
          tolerations: [{ key: 'new' }],
          '$setElementOrder/containers': [{ name: 'a' }, { name: 'c' }],
        },
      },
      keys,
    );
    expect(out).toEqual({
      spec: {
        containers: [
          { name: 'a', image: 'a:1', env: [{ name: 'Y', value: '2' }], ports: [{ containerPort: 80 }, { containerPort: 443 }] },
          { name: 'c', image: 'c:1' },
        ],
        tolerations: [{ key: 'new' }],
      },
    });
    const replaced = strategicMergePatch(pod, { spec: { containers: [{ name: 'z', image: 'z' }, { $patch: 'replace' }] } }, keys);
    expect((replaced.spec as { containers: unknown[] }).containers).toEqual([{ name: 'z', image: 'z' }]);
  });
});

describe('server-side apply, approximated', () => {
  it('prunes what the manager applied before and no longer applies', () => {
    const keys = new Map(podSpecMergeKeys('spec'));
    const live = { metadata: { name: 'p', labels: { a: '1', b: '2', other: 'x' } }, spec: { containers: [{ name: 'c', image: 'i', env: [{ name: 'X' }, { name: 'Y' }, { name: 'Z' }] }, { name: 'd' }] } };
    const previous = { metadata: { name: 'p', labels: { a: '1', b: '2' } }, spec: { containers: [{ name: 'c', env: [{ name: 'X' }, { name: 'Y' }] }, { name: 'd' }] } };
    const next = { metadata: { name: 'p', labels: { a: '1' } }, spec: { containers: [{ name: 'c', env: [{ name: 'X' }] }] } };
    expect(pruneUnapplied(live, previous, next, keys)).toEqual({
      metadata: { name: 'p', labels: { a: '1', other: 'x' } },
      spec: { containers: [{ name: 'c', image: 'i', env: [{ name: 'X' }, { name: 'Z' }] }] },
    });
    expect(pruneUnapplied(live, previous, { spec: {} }, keys)).toMatchObject({ metadata: { name: 'p' } });
  });
});

describe('simulation rules', () => {
  it('hashes a pod template stably and differently for different templates', () => {
    const a = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } };
    const reordered = { spec: { containers: [{ image: 'i:1', name: 'c' }] }, metadata: { labels: { app: 'x' } } };
    expect(templateHash(a)).toBe(templateHash(reordered));
    expect(templateHash(a)).not.toBe(templateHash({ ...a, spec: { containers: [{ name: 'c', image: 'i:2' }] } }));
    expect(templateHash(a)).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
  });

  it.each([
    ['nginx:fail', 'fail'],
    ['ghcr.io/acme/api:fail-missing', 'fail'],
    ['nginx:crash', 'crash'],
    ['registry:5000/app:crash-2', 'crash'],
    ['nginx', 'ok'],
    ['registry:5000/failing/app:1.0', 'ok'],
    ['nginx@sha256:abc', 'ok'],
  ])('image %s behaves %s', (image, behaviour) => {
    expect(imageBehaviour(image)).toBe(behaviour);
  });
});
