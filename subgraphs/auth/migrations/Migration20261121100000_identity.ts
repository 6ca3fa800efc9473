import { Migration } from '@mikro-orm/migrations';

/**
 * Identity: tenants, users, roles, sessions and refresh tokens, personal access tokens and API
 * keys, service accounts, and the revocation feed the edge follows. Seeds the built-in roles
 * (never an account: the super-admin is bootstrapped, spec 4.9 rule 3).
 */
export class Migration20261121100000_identity extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "auth"."tenant" ("id" uuid not null, "name" text not null, "created_at" timestamptz not null, constraint "tenant_pkey" primary key ("id"));`);
    this.addSql(`create table "auth"."role" ("id" uuid not null, "tenant_id" uuid null, "name" text not null, "description" text not null default '', "permissions" text[] not null, "built_in" boolean not null default false, "created_at" timestamptz not null, constraint "role_pkey" primary key ("id"));`);
    this.addSql(`alter table "auth"."role" add constraint "role_tenant_name_unique" unique ("tenant_id", "name");`);
    this.addSql(`create table "auth"."user" ("id" uuid not null, "tenant_id" uuid null, "email" text not null, "username" text not null, "password_hash" text not null, "active" boolean not null default true, "email_verified" boolean not null default false, "last_login_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "user_pkey" primary key ("id"));`);
    this.addSql(`create index "user_tenant_idx" on "auth"."user" ("tenant_id");`);
    this.addSql(`alter table "auth"."user" add constraint "user_email_unique" unique ("email");`);
    this.addSql(`alter table "auth"."user" add constraint "user_username_unique" unique ("username");`);
    this.addSql(`create table "auth"."user_role" ("user_id" uuid not null, "role_id" uuid not null, constraint "user_role_pkey" primary key ("user_id", "role_id"));`);
    this.addSql(`alter table "auth"."user_role" add constraint "user_role_user_id_foreign" foreign key ("user_id") references "auth"."user" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "auth"."user_role" add constraint "user_role_role_id_foreign" foreign key ("role_id") references "auth"."role" ("id") on update cascade on delete cascade;`);
    this.addSql(`create table "auth"."session" ("id" uuid not null, "user_id" uuid not null, "tenant_id" uuid null, "created_at" timestamptz not null, "last_refreshed_at" timestamptz null, "expires_at" timestamptz not null, "revoked_at" timestamptz null, "revoked_reason" text null, constraint "session_pkey" primary key ("id"));`);
    this.addSql(`create index "session_user_idx" on "auth"."session" ("user_id");`);
    this.addSql(`create table "auth"."refresh_token" ("id" uuid not null, "session_id" uuid not null, "issued_at" timestamptz not null, "expires_at" timestamptz not null, "used_at" timestamptz null, constraint "refresh_token_pkey" primary key ("id"));`);
    this.addSql(`create index "refresh_token_session_idx" on "auth"."refresh_token" ("session_id");`);
    this.addSql(`create table "auth"."credential" ("id" uuid not null, "kind" text check ("kind" in ('pat', 'api_key')) not null, "user_id" uuid null, "service_account_id" uuid null, "tenant_id" uuid null, "name" text not null, "hash" text not null, "last_four" text not null, "scopes" text[] null, "expires_at" timestamptz null, "last_used_at" timestamptz null, "created_at" timestamptz not null, "revoked_at" timestamptz null, constraint "credential_pkey" primary key ("id"));`);
    this.addSql(`create index "credential_user_idx" on "auth"."credential" ("user_id");`);
    this.addSql(`create index "credential_service_account_idx" on "auth"."credential" ("service_account_id");`);
    this.addSql(`alter table "auth"."credential" add constraint "credential_hash_unique" unique ("hash");`);
    this.addSql(`create table "auth"."service_account" ("id" uuid not null, "tenant_id" uuid null, "name" text not null, "description" text not null default '', "client_id" text not null, "secret_hash" text not null, "allowed_scopes" text[] not null, "created_by" text not null, "created_at" timestamptz not null, "disabled_at" timestamptz null, constraint "service_account_pkey" primary key ("id"));`);
    this.addSql(`alter table "auth"."service_account" add constraint "service_account_client_id_unique" unique ("client_id");`);
    this.addSql(`create table "auth"."revocation" ("id" bigserial primary key, "kind" text not null, "value" text not null, "created_at" timestamptz not null, "expires_at" timestamptz not null);`);
    this.addSql(`create index "revocation_expires_idx" on "auth"."revocation" ("expires_at");`);
    // Built-in roles. Their permissions are the scopes of spec 5.3 their members may use.
    this.addSql(`insert into "auth"."role" ("id", "tenant_id", "name", "description", "permissions", "built_in", "created_at") values
      (gen_random_uuid(), null, 'super_admin', 'Platform administrator: every tenant, host and cloud credentials.', '{read,deploy,actions,agents,admin}', true, now()),
      (gen_random_uuid(), null, 'admin', 'Tenant administrator: users, roles, service accounts and everything of the tenant.', '{read,deploy,actions,agents,admin}', true, now()),
      (gen_random_uuid(), null, 'developer', 'Deploys and operates apps, pipelines and agents of the tenant.', '{read,deploy,actions,agents}', true, now()),
      (gen_random_uuid(), null, 'viewer', 'Reads everything of the tenant.', '{read}', true, now());`);
  }

  override async down(): Promise<void> {
    for (const table of ['revocation', 'service_account', 'credential', 'refresh_token', 'session', 'user_role', 'user', 'role', 'tenant']) {
      this.addSql(`drop table if exists "auth"."${table}" cascade;`);
    }
  }
}
