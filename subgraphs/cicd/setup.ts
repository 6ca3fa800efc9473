import { createEventBus } from '../../kernel/bus.js';
import { loadCicdConfig } from '../../kernel/config.js';
import { createSecretBox, parseEncryptionKey } from '../../kernel/crypto.js';
import type { SubgraphDeps, SubgraphRuntime } from '../../kernel/graphql/startSubgraph.js';
import { startOutboxRelay } from '../../kernel/outbox.js';
import type { CicdPubSub, CicdRuntime } from './runtime.js';

/** The cicd runtime: the secret box, the event bus and the outbox relay that feeds it. */
export async function setupCicd({ orm, logger }: SubgraphDeps, pubSub: CicdPubSub): Promise<SubgraphRuntime> {
  const config = loadCicdConfig();
  const bus = createEventBus(config.rabbitmqUrl, logger);
  const relay = startOutboxRelay({ orm, schema: 'cicd', bus, logger });
  logger.info({ bus: bus.kind }, 'cicd events relay started');
  const runtime: CicdRuntime = { config, box: createSecretBox(parseEncryptionKey(config.secretEncryptionKey)!), relay, pubSub };
  return {
    context: { cicd: runtime },
    async stop() {
      await relay.stop();
      await bus.close();
    },
  };
}
