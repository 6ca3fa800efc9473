import { createHash, randomBytes } from 'node:crypto';

/**
 * Opaque credential values: a recognisable prefix, 30 random base62 characters (178 bits) and a
 * 6-character CRC32 checksum, as GitHub does for its tokens. The prefix lets secret scanners
 * find leaked values; the checksum lets the edge refuse a mistyped or invented value without a
 * database lookup.
 */
export const CREDENTIAL_PREFIXES = {
  pat: 'cop_pat_',
  api_key: 'cop_key_',
  client_secret: 'cop_sec_',
  /** A pipeline's reporting token (X-Pipeline-Token). */
  pipeline_token: 'cop_ppl_',
} as const;
export type CredentialValueKind = keyof typeof CREDENTIAL_PREFIXES;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function base62(value: number, width: number): string {
  let out = '';
  let v = value;
  for (let i = 0; i < width; i += 1) {
    out = BASE62[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // Reject bytes ≥ 248 so every character is equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function generateCredentialValue(kind: CredentialValueKind): string {
  const body = randomBase62(RANDOM_LENGTH);
  return `${CREDENTIAL_PREFIXES[kind]}${body}${base62(crc32(body), CHECKSUM_LENGTH)}`;
}

/** The kind of a well-formed credential value (prefix and checksum), or undefined. */
export function credentialKindOf(value: string): CredentialValueKind | undefined {
  for (const [kind, prefix] of Object.entries(CREDENTIAL_PREFIXES) as [CredentialValueKind, string][]) {
    if (!value.startsWith(prefix)) continue;
    const rest = value.slice(prefix.length);
    if (rest.length !== RANDOM_LENGTH + CHECKSUM_LENGTH || !/^[0-9A-Za-z]+$/.test(rest)) return undefined;
    const body = rest.slice(0, RANDOM_LENGTH);
    return base62(crc32(body), CHECKSUM_LENGTH) === rest.slice(RANDOM_LENGTH) ? kind : undefined;
  }
  return undefined;
}

/** What is stored instead of a credential value. */
export function hashCredential(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
