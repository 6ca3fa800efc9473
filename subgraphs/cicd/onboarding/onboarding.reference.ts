import { Directive, Field, ID, ObjectType } from 'type-graphql';
import type { IResolvers } from '@graphql-tools/utils';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { SubgraphContext } from '../../../kernel/graphql/subgraph.js';
import { Pipeline } from '../pipeline/pipeline.entity.js';
import { PipelineRun } from '../run/run.entity.js';

/** The cicd part of the platform's onboarding checklist (a federated entity keyed by tenant). */
@ObjectType()
@Directive('@key(fields: "tenantId")')
export class OnboardingChecklist {
  @Field(() => ID) tenantId!: string;
  @Field({ description: 'The tenant has a CI pipeline.' }) firstPipeline!: boolean;
  @Field({ description: 'A pipeline of the tenant has reported a run.' }) firstPipelineRun!: boolean;
}

/**
 * Resolves the checklist's pipeline steps for the gateway. The tenant in the reference must be
 * the caller's own (the platform derived it from the same token); anything else is refused.
 */
export const onboardingReferenceResolvers: IResolvers = {
  OnboardingChecklist: {
    async __resolveReference(reference: { tenantId: string }, context: SubgraphContext): Promise<OnboardingChecklist> {
      if (!context.identity || context.identity.tenantId !== reference.tenantId) throw new AppError(ErrorCodes.notFound, 'onboarding checklist not found');
      const [pipelines, runs] = await Promise.all([context.em.count(Pipeline, {}), context.em.count(PipelineRun, {})]);
      return { tenantId: reference.tenantId, firstPipeline: pipelines > 0, firstPipelineRun: runs > 0 };
    },
  },
};
