import { Migration } from '@mikro-orm/migrations';

/** Apps (spec 1, 4.1) and the tags and notes of their revisions. */
export class Migration20261121600000_apps extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "platform"."app" ("id" uuid not null, "tenant_id" uuid not null, "cloudspace_id" uuid not null, "name" text not null, "vcluster" text not null, "image" text not null, "port" int not null, "cpu_request" text not null, "memory_request" text not null, "tls" boolean not null, "domain" text null, "address" text not null, "replicas" int not null, "stopped_replicas" int null, "autoscaling" jsonb null, "env" jsonb not null, "health_check" jsonb null, "generation" int not null default 1, "change" text not null default 'created', "restarted_at" text null, "phase" text check ("phase" in ('Pending', 'Syncing', 'Deploying', 'Verifying', 'Running', 'Failed', 'Stopped', 'Deleting')) not null default 'Pending', "message" text not null default '', "last_commit" text null, "last_commit_at" timestamptz null, "reported_commit" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "app_pkey" primary key ("id"));`);
    this.addSql(`create index "app_tenant_created_idx" on "platform"."app" ("tenant_id", "created_at", "id");`);
    this.addSql(`alter table "platform"."app" add constraint "app_cloudspace_name_key" unique ("cloudspace_id", "name");`);
    this.addSql(`create table "platform"."app_revision_note" ("id" uuid not null, "tenant_id" uuid not null, "app_id" uuid not null, "revision" int not null, "tags" text[] not null, "notes" text not null default '', "updated_at" timestamptz not null, constraint "app_revision_note_pkey" primary key ("id"));`);
    this.addSql(`alter table "platform"."app_revision_note" add constraint "app_revision_note_key" unique ("app_id", "revision");`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "platform"."app_revision_note" cascade;');
    this.addSql('drop table if exists "platform"."app" cascade;');
  }
}
