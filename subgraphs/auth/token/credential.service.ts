import type { EntityManager } from '@mikro-orm/postgresql';
import { findByIdOrNotFound } from '../../../kernel/db.js';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { credentialKindOf, generateCredentialValue, hashCredential } from '../../../kernel/credentials.js';
import { hasRole, ROLES, SCOPES, type Identity, type Scope } from '../../../kernel/identity.js';
import { pageNewestFirst } from '../../../kernel/pagination.js';
import type { Page } from '../../../kernel/graphql/page.js';
import { identityOfUser, recordRevocation } from '../runtime.js';
import { ServiceAccount } from '../service-account/service-account.entity.js';
import { User } from '../user/user.entity.js';
import { Credential, CredentialKind } from './credential.entity.js';

/** Personal access tokens expire after 1 to 366 days (default 30): a leaked one dies on its own. */
export const PAT_EXPIRY_DAYS = { min: 1, max: 366, default: 30 } as const;
/** API keys may expire (1 to 3650 days) or not; they are for programs and are rotated by revoking. */
export const API_KEY_EXPIRY_DAYS = { min: 1, max: 3650 } as const;

const LAST_USED_RESOLUTION_MS = 60_000;

export interface CreatedCredential {
  credential: Credential;
  /** The value, shown this once. */
  value: string;
}

/** Who a credential value stands for, as the edge needs it. */
export interface ResolvedCredential {
  identity: Identity;
  expiresAt: Date | null;
  issuedAt: Date;
}

function checkScopes(requested: readonly string[] | null | undefined, holder: Identity, what: string): Scope[] | null {
  if (requested === null || requested === undefined) return null;
  const unknown = requested.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new AppError(ErrorCodes.validationFailed, `unknown scopes: ${unknown.join(', ')} (allowed: ${SCOPES.join(', ')})`);
  if (requested.length === 0) throw new AppError(ErrorCodes.validationFailed, `a ${what} needs at least one scope`);
  if (requested.includes('admin') && !hasRole(holder, ROLES.admin)) throw new AppError(ErrorCodes.forbidden, 'scope "admin" is only for administrators');
  const beyond = requested.filter((s) => !holder.scopes.includes(s as Scope));
  if (beyond.length > 0) throw new AppError(ErrorCodes.forbidden, `you cannot grant scopes you do not hold: ${beyond.join(', ')}`);
  return SCOPES.filter((s) => requested.includes(s));
}

function expiry(days: number | null | undefined, bounds: { min: number; max: number }, fallback: number | null): Date | null {
  const value = days ?? fallback;
  if (value === null) return null;
  if (!Number.isInteger(value) || value < bounds.min || value > bounds.max) {
    throw new AppError(ErrorCodes.validationFailed, `expires_in_days must be an integer from ${bounds.min} to ${bounds.max}`);
  }
  return new Date(Date.now() + value * 24 * 3600 * 1000);
}

/**
 * Personal access tokens and API keys. Both are opaque values stored as hashes and shown once.
 * A PAT belongs to a user, always expires and is limited to the scopes chosen for it; an API key
 * is long-lived, belongs to a user (acting with the user's full permissions unless limited) or
 * to a service account, and is what authenticates the internal endpoints.
 */
export class CredentialService {
  constructor(
    private readonly em: EntityManager,
    private readonly identity: Identity | null,
  ) {}

  private caller(): Identity {
    if (!this.identity) throw new AppError(ErrorCodes.unauthenticated, 'authentication required');
    return this.identity;
  }

  /** Credentials are made by people: a service account or a client token cannot mint more. */
  private user(): Identity {
    const caller = this.caller();
    if (caller.credential === 'client' || caller.roles.includes('service_account')) throw new AppError(ErrorCodes.forbidden, 'service accounts cannot create or list personal credentials');
    return caller;
  }

  async create(kind: CredentialKind, input: { name: string; scopes?: string[] | null; expiresInDays?: number | null }): Promise<CreatedCredential> {
    const caller = this.user();
    const name = input.name.trim();
    if (name.length < 1 || name.length > 100) throw new AppError(ErrorCodes.validationFailed, 'name must be 1 to 100 characters');
    const isPat = kind === CredentialKind.pat;
    const scopes = checkScopes(isPat ? (input.scopes ?? ['read']) : input.scopes, caller, isPat ? 'personal access token' : 'API key');
    const expiresAt = isPat ? expiry(input.expiresInDays, PAT_EXPIRY_DAYS, PAT_EXPIRY_DAYS.default) : expiry(input.expiresInDays, API_KEY_EXPIRY_DAYS, null);
    return this.store({ kind, name, scopes, expiresAt, userId: caller.subject, tenantId: caller.tenantId });
  }

  /** An API key for a service account, made by an administrator of its tenant. */
  async createForServiceAccount(serviceAccountId: string, input: { name: string; expiresInDays?: number | null }): Promise<CreatedCredential> {
    const account = await findByIdOrNotFound(this.em, ServiceAccount, serviceAccountId, 'service account', { disabledAt: null });
    const name = input.name.trim();
    if (name.length < 1 || name.length > 100) throw new AppError(ErrorCodes.validationFailed, 'name must be 1 to 100 characters');
    const expiresAt = expiry(input.expiresInDays, API_KEY_EXPIRY_DAYS, null);
    return this.store({ kind: CredentialKind.apiKey, name, scopes: null, expiresAt, serviceAccountId: account.id, tenantId: account.tenantId });
  }

  private async store(fields: Partial<Credential> & { kind: CredentialKind; name: string }): Promise<CreatedCredential> {
    const value = generateCredentialValue(fields.kind === CredentialKind.pat ? 'pat' : 'api_key');
    const credential = this.em.create(Credential, { ...fields, hash: hashCredential(value), lastFour: value.slice(-4) } as Credential);
    await this.em.flush();
    return { credential, value };
  }

  list(kind: CredentialKind, args: { limit?: number | null; cursor?: string | null }): Promise<Page<Credential>> {
    const caller = this.user();
    return pageNewestFirst<Credential>(this.em, Credential, `credentials:${kind}`, { kind, userId: caller.subject, revokedAt: null }, args);
  }

  async revoke(kind: CredentialKind, id: string): Promise<void> {
    const caller = this.user();
    const credential = await findByIdOrNotFound(this.em, Credential, id, kind === CredentialKind.pat ? 'personal access token' : 'API key', { kind, userId: caller.subject, revokedAt: null });
    credential.revokedAt = new Date();
    recordRevocation(this.em, 'credential', credential.id);
    await this.em.flush();
  }

  /**
   * Resolves a credential value to the identity it acts as, or null. A PAT or a user's key acts
   * with the user's current permissions, limited to its scopes, so a role taken away also
   * narrows every token the user made.
   */
  async resolve(value: string): Promise<ResolvedCredential | null> {
    const kind = credentialKindOf(value);
    if (kind !== 'pat' && kind !== 'api_key') return null;
    const credential = await this.em.findOne(Credential, { hash: hashCredential(value) }, { filters: false });
    if (!credential || credential.revokedAt || (credential.expiresAt && credential.expiresAt <= new Date())) return null;
    let identity: Identity;
    if (credential.userId) {
      const user = await this.em.findOne(User, { id: credential.userId }, { filters: false, populate: ['roles'] });
      if (!user || !user.active) return null;
      const own = identityOfUser(user);
      identity = { ...own, scopes: credential.scopes ? own.scopes.filter((s) => credential.scopes!.includes(s)) : own.scopes };
    } else {
      const account = await this.em.findOne(ServiceAccount, { id: credential.serviceAccountId! }, { filters: false });
      if (!account || account.disabledAt) return null;
      identity = { subject: account.id, tenantId: account.tenantId, roles: ['service_account'], scopes: account.allowedScopes, clientId: account.clientId };
    }
    identity = { ...identity, credential: credential.kind === CredentialKind.pat ? 'pat' : 'api_key', credentialId: credential.id };
    if (!credential.lastUsedAt || Date.now() - credential.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      credential.lastUsedAt = new Date();
      await this.em.flush();
    }
    return { identity, expiresAt: credential.expiresAt, issuedAt: credential.createdAt };
  }
}
