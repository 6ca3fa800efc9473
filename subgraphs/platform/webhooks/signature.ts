import { createHmac } from 'node:crypto';

/**
 * `Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` (spec 6). During a
 * secret rotation's overlap window every live secret signs, each as its own `v1=` value, so a
 * receiver holding either secret verifies (the scheme Stripe uses, so its libraries verify it).
 */
export function signatureHeader(rawBody: string, secrets: readonly string[], timestamp: number = Math.floor(Date.now() / 1000)): string {
  if (secrets.length === 0) throw new Error('a delivery needs at least one signing secret');
  const signed = `${timestamp}.${rawBody}`;
  const values = secrets.map((secret) => `v1=${createHmac('sha256', secret).update(signed, 'utf8').digest('hex')}`);
  return [`t=${timestamp}`, ...values].join(',');
}
