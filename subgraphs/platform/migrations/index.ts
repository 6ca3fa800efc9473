import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000_support_tickets } from './Migration20261121000000_support_tickets.js';
import { Migration20261121300000_webhook_subscriptions } from './Migration20261121300000_webhook_subscriptions.js';

/** Every migration of the platform schema, oldest first. Append new ones; never edit applied ones. */
export const migrations: MigrationObject[] = [
  { name: 'Migration20261121000000_support_tickets', class: Migration20261121000000_support_tickets },
  { name: 'Migration20261121300000_webhook_subscriptions', class: Migration20261121300000_webhook_subscriptions },
];
