import { appRoutes } from './apps.js';
import { appExtraRoutes } from './app-extras.js';
import { authRoutes } from './auth.js';
import { cicdRoutes, platformPipelineRoutes } from './cicd.js';
import { authCloudSpaceRoutes, clusterRoutes, platformCloudSpaceRoutes } from './clusters.js';
import { cloudSpaceViewRoutes } from './cloudspace-views.js';
import { healthRoutes, platformRoutes } from './platform.js';
import { onboardingRoutes } from './onboarding.js';
import { webhookRoutes } from './webhooks.js';
import type { RestRoute } from './route.js';

export type { RestRoute, Prefix, HttpMethod } from './route.js';

/** Every REST route of the facade, by gateway prefix. */
export const routes: readonly RestRoute[] = [...healthRoutes, ...authRoutes, ...cicdRoutes, ...platformRoutes, ...platformPipelineRoutes, ...webhookRoutes, ...clusterRoutes, ...platformCloudSpaceRoutes, ...cloudSpaceViewRoutes, ...authCloudSpaceRoutes, ...onboardingRoutes, ...appRoutes, ...appExtraRoutes];
