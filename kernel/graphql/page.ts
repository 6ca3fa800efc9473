import { IsInt, IsOptional, Max, MaxLength, Min } from 'class-validator';
import { ArgsType, Field, Int, ObjectType, type ClassType } from 'type-graphql';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, type PageOfRows as Page } from '../pagination.js';

@ArgsType()
export class PageArgs {
  @Field(() => Int, { nullable: true, description: `Page size, 1 to ${MAX_PAGE_LIMIT}; default ${DEFAULT_PAGE_LIMIT}.` })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  limit?: number;

  @Field({ nullable: true, description: 'Opaque cursor from the previous page\'s `nextCursor`.' })
  @IsOptional()
  @MaxLength(512)
  cursor?: string;
}

export type { PageOfRows as Page } from '../pagination.js';

/** The pagination envelope of spec part 2 (`data`, `next_cursor`, `total`) as a GraphQL type. */
export function PageOf<T extends object>(item: ClassType<T>, name: string): ClassType<Page<T>> {
  @ObjectType(name, { description: `One page of ${item.name} records.` })
  class PageType implements Page<T> {
    @Field(() => [item])
    data!: T[];

    @Field(() => String, { nullable: true, description: 'Cursor of the next page; null on the last page.' })
    nextCursor!: string | null;

    @Field(() => Int, { description: 'Number of records matching the filters, over all pages.' })
    total!: number;
  }
  return PageType;
}
