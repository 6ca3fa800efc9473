import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121100000_identity } from './Migration20261121100000_identity.js';

/** Every migration of the auth schema, oldest first. Append new ones; never edit applied ones. */
export const migrations: MigrationObject[] = [{ name: 'Migration20261121100000_identity', class: Migration20261121100000_identity }];
