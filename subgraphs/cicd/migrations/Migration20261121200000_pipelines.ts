import { Migration } from '@mikro-orm/migrations';
import { outboxTableSql } from '../../../kernel/outbox.js';

/** Pipelines, runs and stages, handled Git-host deliveries, and the outbox of cicd.events. */
export class Migration20261121200000_pipelines extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "cicd"."pipeline" ("id" uuid not null, "tenant_id" uuid not null, "name" text not null, "repository" text not null, "branch" text not null, "provider" text check ("provider" in ('host_a', 'host_b', 'generic')) not null, "trigger_events" text[] not null, "deploy_cluster_id" text null, "webhook_secret_sealed" text not null, "reporting_token_hash" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "pipeline_pkey" primary key ("id"));`);
    this.addSql(`alter table "cicd"."pipeline" add constraint "pipeline_reporting_token_unique" unique ("reporting_token_hash");`);
    this.addSql(`create index "pipeline_repository_idx" on "cicd"."pipeline" ("repository");`);
    this.addSql(`create table "cicd"."pipeline_run" ("id" uuid not null, "pipeline_id" uuid not null, "tenant_id" uuid not null, "status" text check ("status" in ('queued', 'running', 'success', 'failed', 'cancelled')) not null default 'queued', "trigger_type" text not null default 'manual', "commit" text not null, "branch" text not null default '', "author" text not null default '', "message" text not null default '', "started_at" timestamptz null, "finished_at" timestamptz null, "duration_secs" int null, "cluster_id" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "pipeline_run_pkey" primary key ("id"));`);
    this.addSql(`create index "pipeline_run_commit_idx" on "cicd"."pipeline_run" ("pipeline_id", "commit");`);
    this.addSql(`create index "pipeline_run_pipeline_created_idx" on "cicd"."pipeline_run" ("pipeline_id", "created_at", "id");`);
    this.addSql(`create index "pipeline_run_tenant_created_idx" on "cicd"."pipeline_run" ("tenant_id", "created_at");`);
    this.addSql(`create table "cicd"."stage_run" ("id" uuid not null, "run_id" uuid not null, "position" int not null, "name" text not null, "status" text not null, "started_at" timestamptz null, "finished_at" timestamptz null, "error_message" text null, "log_excerpt" text null, "exit_code" int null, "log_url" text null, "duration_secs" int null, constraint "stage_run_pkey" primary key ("id"));`);
    this.addSql(`create index "stage_run_run_idx" on "cicd"."stage_run" ("run_id", "position");`);
    this.addSql(`alter table "cicd"."stage_run" add constraint "stage_run_run_id_foreign" foreign key ("run_id") references "cicd"."pipeline_run" ("id") on update cascade on delete cascade;`);
    this.addSql(`create table "cicd"."webhook_delivery" ("id" uuid not null, "provider" text not null, "delivery_id" text not null, "pipeline_id" uuid not null, "event" text not null, "outcome" text not null, "received_at" timestamptz not null, constraint "webhook_delivery_pkey" primary key ("id"));`);
    this.addSql(`alter table "cicd"."webhook_delivery" add constraint "webhook_delivery_unique" unique ("provider", "delivery_id", "pipeline_id");`);
    for (const sql of outboxTableSql('cicd')) this.addSql(sql);
  }

  override async down(): Promise<void> {
    for (const table of ['outbox_message', 'webhook_delivery', 'stage_run', 'pipeline_run', 'pipeline']) this.addSql(`drop table if exists "cicd"."${table}" cascade;`);
  }
}
