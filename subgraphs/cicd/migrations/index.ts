import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121200000_pipelines } from './Migration20261121200000_pipelines.js';

/** Every migration of the cicd schema, oldest first. Append new ones; never edit applied ones. */
export const migrations: MigrationObject[] = [{ name: 'Migration20261121200000_pipelines', class: Migration20261121200000_pipelines }];
