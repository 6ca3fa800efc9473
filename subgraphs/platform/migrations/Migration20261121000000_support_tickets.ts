import { Migration } from '@mikro-orm/migrations';

export class Migration20261121000000_support_tickets extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "platform"."support_ticket" (
      "id" uuid not null,
      "tenant_id" uuid not null,
      "subject" text not null,
      "description" text not null,
      "priority" text check ("priority" in ('low', 'normal', 'high', 'urgent')) not null default 'normal',
      "status" text check ("status" in ('open', 'pending', 'resolved', 'closed')) not null default 'open',
      "category" text null,
      "requester" text not null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      "resolved_at" timestamptz null,
      "closed_at" timestamptz null,
      constraint "support_ticket_pkey" primary key ("id")
    );`);
    this.addSql(`create index "support_ticket_tenant_created_idx" on "platform"."support_ticket" ("tenant_id", "created_at", "id");`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "platform"."support_ticket" cascade;');
  }
}
