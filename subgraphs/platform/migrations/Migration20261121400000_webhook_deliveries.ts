import { Migration } from '@mikro-orm/migrations';

/** Outbound webhook deliveries, their attempts, and the inbox of consumed events (spec 6). */
export class Migration20261121400000_webhook_deliveries extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "platform"."event_inbox" ("event_id" text not null, "event_type" text not null, "tenant_id" uuid null, "received_at" timestamptz not null, "deliveries" int not null default 0, constraint "event_inbox_pkey" primary key ("event_id"));`);
    this.addSql(`create table "platform"."webhook_delivery" ("id" uuid not null, "tenant_id" uuid not null, "subscription_id" uuid not null, "event_id" text not null, "event_type" text not null, "body" text not null, "status" text check ("status" in ('pending', 'succeeded', 'failed')) not null default 'pending', "attempt_count" int not null default 0, "next_attempt_at" timestamptz null, "occurred_at" timestamptz not null, "created_at" timestamptz not null, "last_attempt_at" timestamptz null, "last_status_code" int null, constraint "webhook_delivery_pkey" primary key ("id"));`);
    this.addSql(`alter table "platform"."webhook_delivery" add constraint "webhook_delivery_subscription_event_key" unique ("subscription_id", "event_id");`);
    this.addSql(`create index "webhook_delivery_subscription_created_idx" on "platform"."webhook_delivery" ("subscription_id", "created_at", "id");`);
    this.addSql(`create index "webhook_delivery_due_idx" on "platform"."webhook_delivery" ("status", "next_attempt_at");`);
    this.addSql(`create table "platform"."webhook_delivery_attempt" ("id" uuid not null, "delivery_id" uuid not null, "number" int not null, "attempted_at" timestamptz not null, "duration_ms" int not null, "status_code" int null, "response_excerpt" text null, "error" text null, "succeeded" boolean not null, constraint "webhook_delivery_attempt_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_delivery_attempt_delivery_idx" on "platform"."webhook_delivery_attempt" ("delivery_id", "number");`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "platform"."webhook_delivery_attempt" cascade;');
    this.addSql('drop table if exists "platform"."webhook_delivery" cascade;');
    this.addSql('drop table if exists "platform"."event_inbox" cascade;');
  }
}
