import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000_support_tickets } from './Migration20261121000000_support_tickets.js';
import { Migration20261121300000_webhook_subscriptions } from './Migration20261121300000_webhook_subscriptions.js';
import { Migration20261121400000_webhook_deliveries } from './Migration20261121400000_webhook_deliveries.js';
import { Migration20261121500000_clusters_cloudspaces } from './Migration20261121500000_clusters_cloudspaces.js';
import { Migration20261121600000_apps } from './Migration20261121600000_apps.js';

/** Every migration of the platform schema, oldest first. Append new ones; never edit applied ones. */
export const migrations: MigrationObject[] = [
  { name: 'Migration20261121000000_support_tickets', class: Migration20261121000000_support_tickets },
  { name: 'Migration20261121300000_webhook_subscriptions', class: Migration20261121300000_webhook_subscriptions },
  { name: 'Migration20261121400000_webhook_deliveries', class: Migration20261121400000_webhook_deliveries },
  { name: 'Migration20261121500000_clusters_cloudspaces', class: Migration20261121500000_clusters_cloudspaces },
  { name: 'Migration20261121600000_apps', class: Migration20261121600000_apps },
];
