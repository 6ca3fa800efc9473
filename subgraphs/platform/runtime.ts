import type { PlatformConfig } from '../../kernel/config.js';
import type { SecretBox } from '../../kernel/crypto.js';
import type { SubgraphContext } from '../../kernel/graphql/subgraph.js';

/** What the platform services need besides the request. */
export interface PlatformRuntime {
  config: PlatformConfig;
  box: SecretBox;
}

export interface PlatformContext extends SubgraphContext {
  platform: PlatformRuntime;
}
