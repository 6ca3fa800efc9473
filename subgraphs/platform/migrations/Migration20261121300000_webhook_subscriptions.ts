import { Migration } from '@mikro-orm/migrations';

/** Outbound webhook subscriptions (spec 4.6). */
export class Migration20261121300000_webhook_subscriptions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "platform"."webhook_subscription" ("id" uuid not null, "tenant_id" uuid not null, "url" text not null, "events" text[] not null, "cluster_ids" text[] null, "cloudspace_ids" text[] null, "description" text not null default '', "enabled" boolean not null default true, "secret_sealed" text not null, "previous_secret_sealed" text null, "previous_secret_expires_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "webhook_subscription_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_subscription_tenant_created_idx" on "platform"."webhook_subscription" ("tenant_id", "created_at", "id");`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "platform"."webhook_subscription" cascade;');
  }
}
