import { loadPlatformConfig } from '../../kernel/config.js';
import { createSecretBox, parseEncryptionKey } from '../../kernel/crypto.js';
import type { SubgraphDeps, SubgraphRuntime } from '../../kernel/graphql/startSubgraph.js';
import type { PlatformRuntime } from './runtime.js';

/** The platform runtime: configuration and the secret box for webhook signing secrets. */
export async function setupPlatform(_deps: SubgraphDeps): Promise<SubgraphRuntime> {
  const config = loadPlatformConfig();
  const runtime: PlatformRuntime = { config, box: createSecretBox(parseEncryptionKey(config.secretEncryptionKey)!) };
  return { context: { platform: runtime } };
}
