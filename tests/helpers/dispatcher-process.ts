/**
 * A webhook dispatcher alone in a process, for the test that kills one in the middle of a
 * delivery (SIGKILL: no clean-up runs). Reads DATABASE_URL, SECRET_ENCRYPTION_KEY (hex) and
 * WEBHOOK_CA_FILE; tells its parent `ready`, then sends whatever is due.
 */
import { createOrm } from '../../kernel/db.js';
import { createSecretBox } from '../../kernel/crypto.js';
import { createLogger } from '../../kernel/logger.js';
import { platformSubgraph } from '../../subgraphs/platform/index.js';
import { startDispatcher } from '../../subgraphs/platform/webhooks/delivery.dispatcher.js';

const logger = createLogger({ service: 'dispatcher-child', level: 'warn' });
const orm = await createOrm({ databaseUrl: process.env.DATABASE_URL!, schema: 'platform', entities: platformSubgraph.entities, migrations: platformSubgraph.migrations, logger });
startDispatcher({
  knex: orm.em.getConnection().getKnex(),
  box: createSecretBox(Buffer.from(process.env.SECRET_ENCRYPTION_KEY!, 'hex')),
  logger,
  allowPrivateNetworks: true,
  caFile: process.env.WEBHOOK_CA_FILE,
  pollMs: 50,
});
process.send?.('ready');
