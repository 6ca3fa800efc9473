import { authRoutes } from './auth.js';
import { cicdRoutes, platformPipelineRoutes } from './cicd.js';
import { healthRoutes, platformRoutes } from './platform.js';
import { webhookRoutes } from './webhooks.js';
import type { RestRoute } from './route.js';

export type { RestRoute, Prefix, HttpMethod } from './route.js';

/** Every REST route of the facade, by gateway prefix. */
export const routes: readonly RestRoute[] = [...healthRoutes, ...authRoutes, ...cicdRoutes, ...platformRoutes, ...platformPipelineRoutes, ...webhookRoutes];
