import { Migration } from '@mikro-orm/migrations';
import { outboxTableSql } from '../../../kernel/outbox.js';

/** Clusters, CloudSpaces (spec 4.2) and the platform's outbox (cluster and CloudSpace events, workflow-manager notices). */
export class Migration20261121500000_clusters_cloudspaces extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "platform"."cloudspace" ("id" uuid not null, "tenant_id" uuid not null, "name" text not null, "cluster_id" uuid not null, "namespace" text not null, "default_vcluster" text not null, "status" text check ("status" in ('Pending', 'Provisioning', 'Ready', 'Failed', 'Deleting')) not null default 'Pending', "message" text not null default '', "cpu_limit" text not null, "memory_limit" text not null, "pod_limit" int not null, "attempts" int not null default 0, "lease_until" timestamptz null, "ready_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "cloudspace_pkey" primary key ("id"));`);
    this.addSql(`create index "cloudspace_status_idx" on "platform"."cloudspace" ("status", "lease_until");`);
    this.addSql(`create index "cloudspace_tenant_created_idx" on "platform"."cloudspace" ("tenant_id", "created_at", "id");`);
    this.addSql(`alter table "platform"."cloudspace" add constraint "cloudspace_namespace_key" unique ("cluster_id", "namespace");`);
    this.addSql(`alter table "platform"."cloudspace" add constraint "cloudspace_tenant_name_key" unique ("tenant_id", "name");`);
    this.addSql(`create table "platform"."cluster" ("id" uuid not null, "tenant_id" uuid null, "name" text not null, "source" text check ("source" in ('connected', 'cluster_api', 'self')) not null, "phase" text check ("phase" in ('Pending', 'Provisioning', 'Provisioned', 'Deleting', 'Failed')) not null default 'Pending', "message" text not null default '', "kubeconfig_sealed" text null, "capi_name" text null, "infrastructure_kind" text null, "kubernetes_version" text null, "lease_until" timestamptz null, "provisioned_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "cluster_pkey" primary key ("id"));`);
    this.addSql(`create index "cluster_phase_idx" on "platform"."cluster" ("phase", "lease_until");`);
    this.addSql(`create index "cluster_tenant_created_idx" on "platform"."cluster" ("tenant_id", "created_at", "id");`);
    this.addSql(`alter table "platform"."cluster" add constraint "cluster_tenant_name_key" unique ("tenant_id", "name");`);
    for (const sql of outboxTableSql('platform')) this.addSql(sql);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "platform"."outbox_message" cascade;');
    this.addSql('drop table if exists "platform"."cloudspace" cascade;');
    this.addSql('drop table if exists "platform"."cluster" cascade;');
  }
}
