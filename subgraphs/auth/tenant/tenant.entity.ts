import { Entity, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Field, ID, ObjectType } from 'type-graphql';

/** A customer organisation. Every tenant-owned row of every service carries its id. */
@Entity({ tableName: 'tenant' })
@ObjectType({ description: 'A customer organisation; everything a tenant user sees belongs to it.' })
export class Tenant {
  [OptionalProps]?: 'id' | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'text' })
  @Field()
  name!: string;

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();
}
