import type { EntityManager } from '@mikro-orm/postgresql';
import { findByIdOrNotFound } from '../../../kernel/db.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { generateCredentialValue, hashCredential } from '../../../kernel/credentials.js';
import { hasRole, ROLES, SCOPES, signAccessToken, type Identity, type Scope } from '../../../kernel/identity.js';
import { pageNewestFirst } from '../../../kernel/pagination.js';
import type { Page } from '../../../kernel/graphql/page.js';
import { rateLimited } from '../session/session.service.js';
import { recordRevocation, type AuthRuntime } from '../runtime.js';
import { ServiceAccount } from './service-account.entity.js';

const OAuthErrors = {
  invalidRequest: ErrorCodes.oauthInvalidRequest,
  invalidClient: ErrorCodes.oauthInvalidClient,
  invalidScope: ErrorCodes.oauthInvalidScope,
  unsupportedGrantType: ErrorCodes.oauthUnsupportedGrantType,
};

export interface OAuthToken {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  scope: string;
}

export interface CreatedServiceAccount {
  serviceAccount: ServiceAccount;
  clientSecret: string;
}

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export class ServiceAccountService {
  constructor(
    private readonly em: EntityManager,
    private readonly identity: Identity | null,
    private readonly runtime: AuthRuntime,
  ) {}

  private admin(): Identity {
    const caller = this.identity;
    if (!caller) throw new AppError(ErrorCodes.unauthenticated, 'authentication required');
    if (!hasRole(caller, ROLES.admin)) throw new AppError(ErrorCodes.forbidden, 'role "admin" required');
    return caller;
  }

  async create(input: { name: string; description?: string | null; allowedScopes: string[] }): Promise<CreatedServiceAccount> {
    const caller = this.admin();
    const name = input.name.trim();
    if (name.length < 1 || name.length > 100) throw new AppError(ErrorCodes.validationFailed, 'name must be 1 to 100 characters');
    const unknown = input.allowedScopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length > 0 || input.allowedScopes.length === 0) throw new AppError(ErrorCodes.validationFailed, `allowed_scopes must be a non-empty list of ${SCOPES.join(', ')}`);
    const beyond = input.allowedScopes.filter((s) => !caller.scopes.includes(s as Scope));
    if (beyond.length > 0) throw new AppError(ErrorCodes.forbidden, `you cannot grant scopes you do not hold: ${beyond.join(', ')}`);
    const clientSecret = generateCredentialValue('client_secret');
    const serviceAccount = this.em.create(ServiceAccount, {
      tenantId: caller.tenantId,
      name,
      description: input.description?.trim() ?? '',
      clientId: `sa_${randomBytes(12).toString('hex')}`,
      secretHash: hashCredential(clientSecret),
      allowedScopes: SCOPES.filter((s) => input.allowedScopes.includes(s)),
      createdBy: caller.subject,
    });
    await this.em.flush();
    return { serviceAccount, clientSecret };
  }

  list(args: { limit?: number | null; cursor?: string | null }): Promise<Page<ServiceAccount>> {
    this.admin();
    return pageNewestFirst<ServiceAccount>(this.em, ServiceAccount, 'service_accounts', { disabledAt: null }, args);
  }

  async get(id: string): Promise<ServiceAccount> {
    this.admin();
    return findByIdOrNotFound(this.em, ServiceAccount, id, 'service account', { disabledAt: null });
  }

  /** Disables the account: its secret, its keys and the tokens it holds stop working. */
  async remove(id: string): Promise<void> {
    const account = await this.get(id);
    account.disabledAt = new Date();
    recordRevocation(this.em, 'subject', account.id);
    await this.em.flush();
  }

  /** RFC 6749 section 4.4: the client-credentials grant. */
  async issueToken(input: { grantType?: string | null; clientId?: string | null; clientSecret?: string | null; scope?: string | null }): Promise<OAuthToken> {
    if (!input.grantType) throw new AppError(OAuthErrors.invalidRequest, 'grant_type is required');
    if (input.grantType !== 'client_credentials') throw new AppError(OAuthErrors.unsupportedGrantType, `grant_type "${input.grantType}" is not supported; use client_credentials`);
    if (!input.clientId || !input.clientSecret) throw new AppError(OAuthErrors.invalidClient, 'client_id and client_secret are required (form fields or HTTP Basic)');
    const decision = await this.runtime.clientLimiter.hit(input.clientId);
    if (!decision.allowed) throw rateLimited(decision.retryAfterSecs);
    const account = await this.em.findOne(ServiceAccount, { clientId: input.clientId }, { filters: false });
    const presented = hashCredential(input.clientSecret);
    // Compare against a stand-in when the client is unknown, so both failures cost the same.
    const valid = sameHash(account?.secretHash ?? hashCredential('unknown-client'), presented) && !!account;
    if (!account || !valid || account.disabledAt) throw new AppError(OAuthErrors.invalidClient, 'client authentication failed');
    const requested = (input.scope ?? '').split(' ').filter(Boolean);
    const outside = requested.filter((s) => !account.allowedScopes.includes(s as Scope));
    if (outside.length > 0) throw new AppError(OAuthErrors.invalidScope, `scope not allowed for this client: ${outside.join(' ')}`);
    const scopes = requested.length > 0 ? account.allowedScopes.filter((s) => requested.includes(s)) : account.allowedScopes;
    const { config } = this.runtime;
    const accessToken = await signAccessToken(
      { subject: account.id, tenantId: account.tenantId, roles: ['service_account'], scopes, clientId: account.clientId, credential: 'client' },
      config.accessSecrets,
      config.accessTokenTtlSecs,
    );
    return { accessToken, tokenType: 'Bearer', expiresIn: config.accessTokenTtlSecs, scope: scopes.join(' ') };
  }
}
