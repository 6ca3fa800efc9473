import { hash, verify } from '@node-rs/argon2';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';

/**
 * argon2id with the OWASP parameters: 19 MiB of memory, 2 iterations, 1 lane. (`@node-rs/argon2`
 * defaults to 4 MiB; these are set explicitly so a dependency update cannot weaken them.)
 */
// algorithm 2 is Argon2id (a const enum in the typings, which isolated modules cannot read).
const ARGON2 = { algorithm: 2, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 } as const;

export const PASSWORD_MIN_LENGTH = 12;
/** argon2 hashes any length, but a cap keeps a megabyte "password" from being a cheap DoS. */
export const PASSWORD_MAX_LENGTH = 128;

/**
 * Passwords seen most often in breach corpora; a password equal to one of these (ignoring
 * case), or made only of one repeated character, is refused whatever its length.
 */
const COMMON = new Set([
  'password1234', 'password12345', 'password123456', '123456789012', '1234567890123', 'qwertyuiopas', 'qwerty123456',
  'iloveyou1234', 'administrator', 'letmein12345', 'welcome12345', 'changeme1234', 'passwordpassword', 'abcdefghijkl',
  'abc123456789', '111111111111', '000000000000', 'trustno11234', 'football1234', 'baseball1234', 'superman1234',
  'sunshine1234', 'princess1234', 'qwertyqwerty', 'asdfghjklasd', 'zxcvbnm12345', 'p@ssw0rd1234', 'passw0rd1234',
]);

/**
 * The password policy (NIST SP 800-63B): at least 12 characters, at most 128, not a common or
 * trivially repetitive password, and not containing the account's email or username. No
 * composition rules: they make passwords harder to remember, not to guess.
 */
export function checkPasswordPolicy(password: string, account: { email?: string; username?: string } = {}): void {
  const problems: string[] = [];
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) problems.push(`be at least ${PASSWORD_MIN_LENGTH} characters long`);
  if (length > PASSWORD_MAX_LENGTH) problems.push(`be at most ${PASSWORD_MAX_LENGTH} characters long`);
  const lower = password.toLowerCase();
  if (COMMON.has(lower) || /^(.)\1*$/.test(password) || /^(?:0123456789|1234567890|abcdefghij)+/.test(lower)) problems.push('not be a common password');
  const local = account.email?.split('@')[0]?.toLowerCase();
  if ((local && local.length >= 4 && lower.includes(local)) || (account.username && account.username.length >= 4 && lower.includes(account.username.toLowerCase()))) {
    problems.push('not contain the email or username');
  }
  if (problems.length > 0) throw new AppError(ErrorCodes.validationFailed, `password must ${problems.join(', ')}`);
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/**
 * A real hash of a random password, verified against when the account does not exist, so that
 * a login for an unknown identifier takes as long as one with a wrong password.
 */
let dummyHash: Promise<string> | undefined;
export function verifyAgainstDummy(password: string): Promise<boolean> {
  dummyHash ??= hashPassword(`dummy-${Math.random()}-${Date.now()}`);
  return dummyHash.then((h) => verifyPassword(h, password)).then(() => false);
}
