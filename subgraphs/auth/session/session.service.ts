import { conflictOnDuplicate } from '../../../kernel/db.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { ACCESS_TOKEN_ISSUER, inspectAccessToken, signAccessToken, signJwt, verifyJwt, type Identity } from '../../../kernel/identity.js';
import { checkPasswordPolicy, hashPassword, verifyAgainstDummy, verifyPassword } from '../password/password.js';
import { Role } from '../role/role.entity.js';
import { identityOfUser, normalise, recordRevocation, type AuthRuntime } from '../runtime.js';
import { Tenant } from '../tenant/tenant.entity.js';
import { User } from '../user/user.entity.js';
import { RefreshToken, Session } from './session.entity.js';

const REFRESH_AUDIENCE = 'cloudops-refresh';
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,252}\.[^\s@]{2,}$/;
const USERNAME = /^[a-z0-9][a-z0-9._-]{2,38}$/;

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

export function checkAccountFields(email: string, username: string): void {
  if (!EMAIL.test(email) || email.length > 254) throw new AppError(ErrorCodes.validationFailed, 'email is not a valid address');
  if (!USERNAME.test(username)) throw new AppError(ErrorCodes.validationFailed, 'username must be 3 to 39 characters: letters, digits, dot, dash or underscore, starting with a letter or digit');
}

export function rateLimited(retryAfterSecs: number): AppError {
  return new AppError(ErrorCodes.rateLimited, `too many attempts; retry in ${retryAfterSecs} s`, { retryAfter: retryAfterSecs });
}

/** Sign-up, sign-in, token refresh and sign-out. */
export class SessionService {
  constructor(
    private readonly em: EntityManager,
    private readonly runtime: AuthRuntime,
  ) {}

  /** Self-service sign-up: a new tenant and its first user, administrator of that tenant. */
  async register(input: { email: string; username: string; password: string; tenantName?: string | null }): Promise<{ user: User; tenant: Tenant }> {
    const email = normalise(input.email);
    const username = normalise(input.username);
    checkAccountFields(email, username);
    const decision = await this.runtime.registerLimiter.hit(email);
    if (!decision.allowed) throw rateLimited(decision.retryAfterSecs);
    checkPasswordPolicy(input.password, { email, username });
    const passwordHash = await hashPassword(input.password);
    const adminRole = await this.em.findOneOrFail(Role, { name: 'admin', tenantId: null });
    return conflictOnDuplicate(
      this.em.transactional(async (em) => {
        const tenant = em.create(Tenant, { name: input.tenantName?.trim() || `${username}'s organisation` });
        const user = em.create(User, { tenantId: tenant.id, email, username, passwordHash });
        user.roles.add(em.getReference(Role, adminRole.id));
        await em.flush();
        return { user, tenant };
      }),
      'an account with this email or username already exists',
    );
  }

  async login(input: { identifier: string; password: string }): Promise<TokenPair> {
    const identifier = normalise(input.identifier);
    const decision = await this.runtime.loginLimiter.hit(identifier);
    if (!decision.allowed) throw rateLimited(decision.retryAfterSecs);
    const user = await this.em.findOne(User, identifier.includes('@') ? { email: identifier } : { username: identifier }, { filters: false, populate: ['roles'] });
    // The same answer, after the same work, whether the account exists or the password is wrong.
    const valid = user ? await verifyPassword(user.passwordHash, input.password) : await verifyAgainstDummy(input.password);
    if (!user || !valid) throw new AppError(ErrorCodes.unauthenticated, 'invalid credentials');
    if (!user.active) throw new AppError(ErrorCodes.unauthenticated, 'account is disabled');
    const session = this.em.create(Session, {
      userId: user.id,
      tenantId: user.tenantId,
      expiresAt: new Date(Date.now() + this.runtime.config.refreshTokenTtlSecs * 1000),
    });
    user.lastLoginAt = new Date();
    return this.issue(user, session);
  }

  /**
   * Exchanges a refresh token for a new pair. Each refresh token works once: the first use marks
   * it used in one conditional UPDATE, so two parallel uses cannot both win; any later use is a
   * replay by someone holding a stolen copy, and the whole session (the token family) is revoked.
   */
  async refresh(refreshToken: string): Promise<TokenPair> {
    const { config } = this.runtime;
    const claims = await verifyJwt(refreshToken, [config.refreshSecrets.current, ...config.refreshSecrets.previous], { issuer: ACCESS_TOKEN_ISSUER, audience: REFRESH_AUDIENCE }).catch(() => {
      throw new AppError(ErrorCodes.unauthenticated, 'refresh token is not valid');
    });
    const jti = claims.jti;
    const sid = claims.sid;
    if (typeof jti !== 'string' || typeof sid !== 'string') throw new AppError(ErrorCodes.unauthenticated, 'refresh token is not valid');
    const knex = this.em.getKnex();
    const claimed = await knex('refresh_token').withSchema('auth').where({ id: jti, session_id: sid }).whereNull('used_at').update({ used_at: new Date() }, ['id']);
    const session = await this.em.findOne(Session, { id: sid }, { filters: false });
    if (!session) throw new AppError(ErrorCodes.unauthenticated, 'refresh token is not valid');
    if (claimed.length === 0) {
      if (!session.revokedAt) await this.revokeSession(session, 'refresh_token_reuse');
      throw new AppError(ErrorCodes.unauthenticated, 'refresh token was already used; the session has been revoked');
    }
    if (session.revokedAt || session.expiresAt <= new Date()) throw new AppError(ErrorCodes.unauthenticated, 'session has ended');
    const user = await this.em.findOne(User, { id: session.userId }, { filters: false, populate: ['roles'] });
    if (!user || !user.active) {
      await this.revokeSession(session, 'account_disabled');
      throw new AppError(ErrorCodes.unauthenticated, 'account is disabled');
    }
    session.lastRefreshedAt = new Date();
    return this.issue(user, session);
  }

  /** Ends the caller's session: its refresh tokens and its access tokens stop working. */
  async logout(identity: Identity): Promise<void> {
    if (!identity.sessionId) throw new AppError(ErrorCodes.badRequest, 'only a session token can be logged out; revoke tokens and keys instead');
    const session = await this.em.findOne(Session, { id: identity.sessionId }, { filters: false });
    if (session && !session.revokedAt) await this.revokeSession(session, 'logout');
  }

  async revokeSession(session: Session, reason: string): Promise<void> {
    session.revokedAt = new Date();
    session.revokedReason = reason;
    recordRevocation(this.em, 'session', session.id);
    await this.em.flush();
  }

  private async issue(user: User, session: Session): Promise<TokenPair> {
    const { config } = this.runtime;
    const jti = randomUUID();
    this.em.create(RefreshToken, { id: jti, sessionId: session.id, expiresAt: session.expiresAt });
    await this.em.flush();
    const identity = identityOfUser(user, { sessionId: session.id, credential: 'session' });
    const accessToken = await signAccessToken(identity, config.accessSecrets, config.accessTokenTtlSecs);
    const ttl = Math.max(1, Math.floor((session.expiresAt.getTime() - Date.now()) / 1000));
    const refreshToken = await signJwt({ sub: user.id, sid: session.id }, config.refreshSecrets.current, { issuer: ACCESS_TOKEN_ISSUER, audience: REFRESH_AUDIENCE, ttlSeconds: ttl, jwtId: jti });
    return { accessToken, refreshToken, tokenType: 'Bearer', expiresIn: config.accessTokenTtlSecs };
  }

  /** Whether an access JWT's session is still alive (introspection). */
  async sessionAlive(sessionId: string): Promise<boolean> {
    const session = await this.em.findOne(Session, { id: sessionId }, { filters: false });
    return !!session && !session.revokedAt && session.expiresAt > new Date();
  }

  inspect(token: string) {
    return inspectAccessToken(token, this.runtime.config.accessSecrets);
  }
}
