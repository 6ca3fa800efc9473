import Stripe from 'stripe';
import { attemptDueAt, RETRY_SCHEDULE_SECS } from '../../../subgraphs/platform/webhooks/retry-schedule.js';
import { signatureHeader } from '../../../subgraphs/platform/webhooks/signature.js';
import { ForbiddenDestinationError, isForbiddenAddress, resolveDestination } from '../../../subgraphs/platform/webhooks/ssrf-guard.js';

// Stripe's verifier is a real, independent implementation of the same scheme; only the header
// name differs (Stripe-Signature there, Service-Signature here).
const stripe = new Stripe('sk_test_unused');
const body = JSON.stringify({ id: 'evt_1', type: 'app.deployed', occurred_at: '2026-11-21T10:00:00Z', tenant_id: 't', data: {} });

describe('Service-Signature', () => {
  it('verifies with the stripe package', () => {
    const header = signatureHeader(body, ['whsec_one']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(stripe.webhooks.constructEvent(body, header, 'whsec_one')).toMatchObject({ id: 'evt_1' });
  });

  it('is refused for another secret, an altered body, or a timestamp older than 300 s', () => {
    const header = signatureHeader(body, ['whsec_one']);
    expect(() => stripe.webhooks.constructEvent(body, header, 'whsec_two')).toThrow();
    expect(() => stripe.webhooks.constructEvent(body.replace('evt_1', 'evt_2'), header, 'whsec_one')).toThrow();
    const stale = signatureHeader(body, ['whsec_one'], Math.floor(Date.now() / 1000) - 301);
    expect(() => stripe.webhooks.constructEvent(body, stale, 'whsec_one', 300)).toThrow(/tolerance/i);
  });

  it('carries one v1 per live secret during a rotation, so either secret verifies', () => {
    const header = signatureHeader(body, ['whsec_new', 'whsec_old']);
    expect(header.split(',').filter((p) => p.startsWith('v1='))).toHaveLength(2);
    expect(stripe.webhooks.constructEvent(body, header, 'whsec_new')).toBeTruthy();
    expect(stripe.webhooks.constructEvent(body, header, 'whsec_old')).toBeTruthy();
  });
});

describe('retry schedule', () => {
  it('is exponential-ish and ends inside 24 hours', () => {
    const occurred = new Date('2026-11-21T00:00:00Z');
    expect(attemptDueAt(occurred, 1)).toEqual(occurred);
    const last = attemptDueAt(occurred, RETRY_SCHEDULE_SECS.length)!;
    expect(last.getTime() - occurred.getTime()).toBeLessThan(24 * 3600 * 1000);
    expect(attemptDueAt(occurred, RETRY_SCHEDULE_SECS.length + 1)).toBeNull();
    for (let i = 1; i < RETRY_SCHEDULE_SECS.length; i += 1) expect(RETRY_SCHEDULE_SECS[i]!).toBeGreaterThan(RETRY_SCHEDULE_SECS[i - 1]!);
  });
});

describe('SSRF guard', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.20.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['::1', true],
    ['fe80::1', true],
    ['fd12:3456::1', true],
    ['::ffff:10.0.0.1', true],
    ['93.184.216.34', false],
    ['2606:2800:220:1:248:1893:25c8:1946', false],
  ])('%s forbidden: %s', (address, forbidden) => {
    expect(isForbiddenAddress(address)).toBe(forbidden);
  });

  it('refuses hosts that resolve to forbidden addresses, unless private networks are allowed', async () => {
    await expect(resolveDestination(new URL('https://localhost/hook'), { allowPrivate: false })).rejects.toBeInstanceOf(ForbiddenDestinationError);
    await expect(resolveDestination(new URL('https://169.254.169.254/latest/meta-data'), { allowPrivate: false })).rejects.toThrow(/metadata/);
    await expect(resolveDestination(new URL('https://[::1]:8443/hook'), { allowPrivate: false })).rejects.toBeInstanceOf(ForbiddenDestinationError);
    expect(await resolveDestination(new URL('https://127.0.0.1:8443/hook'), { allowPrivate: true })).toBe('127.0.0.1');
  });
});
