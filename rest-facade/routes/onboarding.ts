import type { RestRoute } from './route.js';

const CLOUDSPACE = /* GraphQL */ `id tenantId name clusterId namespace defaultVcluster status message cpuLimit memoryLimit podLimit readyAt createdAt updatedAt`;

/** Onboarding (spec 4.7), under `{base}/platform`. */
export const onboardingRoutes: RestRoute[] = [
  {
    prefix: 'platform',
    method: 'POST',
    path: '/api/v1/onboarding/provision',
    summary: 'Provision the tenant\'s first CloudSpace',
    description: 'Optional `name` (default `default`) and quota (`cpu_limit`, `memory_limit`, `pod_limit`). Idempotent: when the tenant already has a CloudSpace, that one is answered with `created: false`. Follow its `status` until Ready (or the checklist).',
    scope: 'deploy',
    body: 'input',
    operation: /* GraphQL */ `mutation ProvisionOnboarding($input: OnboardingProvisionInput) { provisionOnboarding(input: $input) { created cloudspace { ${CLOUDSPACE} } } }`,
  },
  {
    prefix: 'platform',
    method: 'GET',
    path: '/api/v1/onboarding/checklist',
    summary: 'Onboarding progress',
    description: 'Derived from what exists: account, first CloudSpace created and Ready, first webhook subscription (platform), first CI pipeline and first reported run (cicd, joined through federation).',
    scope: 'read',
    operation: /* GraphQL */ `query OnboardingChecklist { onboardingChecklist { tenantId account cloudspaceCreated cloudspaceReady firstCloudspaceId firstWebhook firstApp firstAppRunning firstPipeline firstPipelineRun } }`,
  },
];
