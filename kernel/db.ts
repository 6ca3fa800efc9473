import { MikroORM, type EntityManager, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { MigrationObject } from '@mikro-orm/core';
import pg from 'pg';
import { UniqueConstraintViolationException, type EntityName, type FilterQuery } from '@mikro-orm/core';
import { AppError, ErrorCodes, isUuid, notFound } from './errors.js';
import type { Logger } from './logger.js';

export type { EntityManager };
export type Orm = MikroORM;

export interface DatabaseOptions {
  databaseUrl: string;
  /** PostgreSQL schema owned by the service: `auth`, `cicd` or `platform`. */
  schema: string;
  entities: NonNullable<Options['entities']>;
  migrations: MigrationObject[];
  logger: Logger;
  poolSize?: number;
}

/**
 * Opens the service's MikroORM instance on its own schema. Entities are listed explicitly and
 * migrations are compiled in (no file globbing), so the same code runs from `dist/` and under jest.
 */
export async function createOrm(options: DatabaseOptions): Promise<MikroORM> {
  return MikroORM.init({
    clientUrl: options.databaseUrl,
    schema: options.schema,
    entities: options.entities,
    extensions: [Migrator],
    migrations: {
      tableName: 'mikro_orm_migrations',
      migrationsList: options.migrations,
      transactional: true,
      allOrNothing: true,
      snapshot: false,
    },
    pool: { min: 0, max: options.poolSize ?? 10 },
    forceUtcTimezone: true,
    // Every request works on its own fork; touching the global context is a bug.
    allowGlobalContext: false,
    discovery: { warnWhenNoEntities: false },
    logger: (message) => options.logger.debug({ orm: message }),
  });
}

/**
 * Runs pending migrations while holding a PostgreSQL advisory lock keyed by the schema, so
 * several replicas starting at once apply each migration exactly once. The lock is held on a
 * connection of its own: the migrator uses pooled connections, and a transaction shared with it
 * would deadlock on the schema it creates.
 */
export async function migrate(orm: MikroORM, databaseUrl: string, schema: string, logger: Logger): Promise<string[]> {
  const lock = new pg.Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock(hashtext($1))', [`migrations:${schema}`]);
    await lock.query(`create schema if not exists "${schema}"`);
    const applied = await orm.getMigrator().up();
    const names = applied.map((m) => m.name);
    if (names.length > 0) logger.info({ schema, migrations: names }, 'migrations applied');
    return names;
  } finally {
    await lock.query('select pg_advisory_unlock(hashtext($1))', [`migrations:${schema}`]).catch(() => undefined);
    await lock.end();
  }
}

/** Creates the database named in `url` if it does not exist (local profile and tests). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`refusing to create database with unusual name "${name}"`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) {
      await client.query(`create database "${name}"`).catch((error: { code?: string }) => {
        // Another process created it between our check and our create.
        if (error.code !== '42P04' && error.code !== '23505') throw error;
      });
    }
  } finally {
    await client.end();
  }
}

export async function pingDatabase(orm: MikroORM): Promise<boolean> {
  try {
    await orm.em.getConnection().execute('select 1');
    return true;
  } catch {
    return false;
  }
}

/**
 * A tenant-owned object by id, or `not_found`. Ids are UUIDs, so anything else is simply not
 * found (and never reaches PostgreSQL as a malformed uuid); `where` adds conditions such as the
 * owner, and the request's tenant filter applies as always.
 */
export async function findByIdOrNotFound<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  id: string,
  what: string,
  where: Record<string, unknown> = {},
  options: { populate?: readonly string[]; filters?: false } = {},
): Promise<T> {
  const found = isUuid(id) ? await em.findOne(entity, { ...where, id } as FilterQuery<T>, options as never) : null;
  if (!found) throw notFound(what);
  return found as T;
}

/** Runs `work`; a unique-constraint violation becomes 409 `conflict` with `message`. */
export async function conflictOnDuplicate<T>(work: Promise<T>, message: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw new AppError(ErrorCodes.conflict, message);
    throw error;
  }
}
