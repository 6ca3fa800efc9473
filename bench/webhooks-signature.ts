/**
 * How the receiver of `npm run bench -- webhooks` checks `Service-Signature` (spec 6):
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">[,v1=…]`, what the stripe package's
 * `webhooks.constructEvent` checks, done directly: one HMAC-SHA256 over the exact bytes,
 * constant-time comparison with every `v1` value, and the timestamp within 300 s of the
 * receiver's clock. No JSON parsing, no error objects built for the happy path.
 *
 * Loaded by the receiver's worker thread (`webhooks-receiver.ts`), and by the benchmark, which
 * checks before measuring that it agrees with stripe's verifier both ways. Imports node built-ins
 * only.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What stripe's verifier allows by default, and what the tests' receiver uses. */
export const TOLERANCE_SECONDS = 300;

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/** Why `header` does not verify `body` with `secret` at `nowSeconds`, or null when it does. */
export function signatureProblem(body: string, header: string | undefined, secret: string, nowSeconds: number = Date.now() / 1000): string | null {
  if (!header) return 'no Service-Signature header';
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') timestamp = value;
    else if (key === 'v1') signatures.push(value);
  }
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) return 'no timestamp in Service-Signature';
  if (Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) return `timestamp ${timestamp} is more than ${TOLERANCE_SECONDS} s away`;
  if (signatures.length === 0) return 'no v1 signature in Service-Signature';
  const expected = createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest();
  let verified = false;
  // Every value compared, in constant time each, whichever one matches.
  for (const signature of signatures) if (HEX_SHA256.test(signature) && timingSafeEqual(Buffer.from(signature, 'hex'), expected)) verified = true;
  return verified ? null : 'signature did not verify';
}
