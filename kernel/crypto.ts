import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { AppError, ErrorCodes } from './errors.js';

/**
 * Secrets at rest (pipeline webhook secrets, kubeconfigs, cloud credentials): AES-256-GCM with a
 * random 96-bit nonce per value and the value's purpose as additional authenticated data, so a
 * ciphertext copied into another column does not decrypt there. Stored as
 * `v1.<nonce>.<tag>.<ciphertext>` in base64url.
 */
export interface SecretBox {
  seal(plaintext: string, purpose: string): string;
  open(sealed: string, purpose: string): string;
}

/** Parses a 32-byte key given as 64 hex characters or as base64 / base64url. */
export function parseEncryptionKey(raw: string): Buffer | undefined {
  const text = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  return key.length === 32 ? key : undefined;
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('AES-256-GCM needs a 32-byte key');
  return {
    seal(plaintext, purpose) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(purpose, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', nonce.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
    },
    open(sealed, purpose) {
      const [version, nonce, tag, ciphertext] = sealed.split('.');
      if (version !== 'v1' || !nonce || !tag || ciphertext === undefined) throw new AppError(ErrorCodes.internal, 'stored secret has an unknown format');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
        decipher.setAAD(Buffer.from(purpose, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new AppError(ErrorCodes.internal, 'stored secret cannot be decrypted (wrong SECRET_ENCRYPTION_KEY?)');
      }
    },
  };
}
