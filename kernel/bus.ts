import amqp, { type ChannelModel, type ConfirmChannel, type ConsumeMessage } from 'amqplib';
import type { ChildProcess } from 'node:child_process';
import type { Logger } from './logger.js';

/** Topic exchanges of ARCHITECTURE.md: routing key = event type. */
export const EXCHANGES = { platform: 'platform.events', cicd: 'cicd.events' } as const;

export interface BusMessage {
  exchange: string;
  routingKey: string;
  /** Unique per event; consumers are idempotent on it. */
  messageId: string;
  body: Record<string, unknown>;
}

export type BusHandler = (message: BusMessage) => Promise<void>;

/**
 * Publishes events to topic exchanges and consumes them through durable queues. RabbitMQ with
 * publisher confirms when `RABBITMQ_URL` is set; an in-process bus with the same interface
 * otherwise (the embedded default).
 */
export interface EventBus {
  readonly kind: 'rabbitmq' | 'in-process';
  /** Resolves once the broker has confirmed the message. */
  publish(message: BusMessage): Promise<void>;
  /** Consumes `patterns` of `exchange` through the durable queue `queue`; a handler that throws gets the message again. */
  subscribe(queue: string, exchange: string, patterns: string[], handler: BusHandler): Promise<void>;
  close(): Promise<void>;
}

/** AMQP topic matching: `*` is one word, `#` is zero or more. */
export function topicMatches(pattern: string, key: string): boolean {
  const p = pattern.split('.');
  const k = key.split('.');
  const match = (i: number, j: number): boolean => {
    if (i === p.length) return j === k.length;
    if (p[i] === '#') return match(i + 1, j) || (j < k.length && match(i, j + 1));
    if (j === k.length) return false;
    return (p[i] === '*' || p[i] === k[j]) && match(i + 1, j + 1);
  };
  return match(0, 0);
}

/** The message a child process sends its launcher, and receives from it, to share events. */
interface IpcBusEnvelope {
  type: 'bus';
  message: BusMessage;
}

const isIpcBusEnvelope = (value: unknown): value is IpcBusEnvelope =>
  typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'bus' && typeof (value as { message?: unknown }).message === 'object';

/**
 * Without a broker, the services of the local profile (one process each, forked by the launcher)
 * share events through the launcher: `LAUNCHER_BUS=ipc` in a child's environment makes its
 * in-process bus send every published message to the launcher, which passes it to the other
 * children ({@link relayBusBetween}). Not durable: a message published while its consumer is down
 * is lost, which is why production uses RabbitMQ.
 */
function ipcLink(): { send(message: BusMessage): Promise<void>; onMessage(deliver: (message: BusMessage) => void): () => void } | undefined {
  if (process.env.LAUNCHER_BUS !== 'ipc' || !process.send) return undefined;
  return {
    send: (message) =>
      new Promise<void>((resolve, reject) => {
        process.send!({ type: 'bus', message } satisfies IpcBusEnvelope, undefined, {}, (error) => (error ? reject(error) : resolve()));
      }),
    onMessage(deliver) {
      const listener = (value: unknown) => isIpcBusEnvelope(value) && deliver(value.message);
      process.on('message', listener);
      return () => process.off('message', listener);
    },
  };
}

/** The launcher's side of the local bus: what one child publishes reaches every other child. */
export function relayBusBetween(children: () => Iterable<ChildProcess>): (from: ChildProcess, value: unknown) => void {
  return (from, value) => {
    if (!isIpcBusEnvelope(value)) return;
    for (const child of children()) if (child !== from && child.connected) child.send(value);
  };
}

export function createInProcessBus(logger: Logger): EventBus {
  const queues = new Map<string, { exchange: string; patterns: string[]; handler: BusHandler }>();
  const deliverLocally = (message: BusMessage) => {
    for (const [name, queue] of queues) {
      if (queue.exchange !== message.exchange || !queue.patterns.some((p) => topicMatches(p, message.routingKey))) continue;
      // Delivered asynchronously, and retried like a broker would redeliver.
      const deliver = (attempt: number) => {
        queue.handler(message).catch((error: unknown) => {
          logger.warn({ err: error, queue: name, routingKey: message.routingKey, attempt }, 'in-process consumer failed; retrying');
          if (attempt < 10) setTimeout(() => deliver(attempt + 1), Math.min(30_000, 100 * 2 ** attempt)).unref();
        });
      };
      setImmediate(() => deliver(1));
    }
  };
  const link = ipcLink();
  const unlink = link?.onMessage(deliverLocally);
  return {
    kind: 'in-process',
    async publish(message) {
      deliverLocally(message);
      await link?.send(message);
    },
    async subscribe(queue, exchange, patterns, handler) {
      queues.set(queue, { exchange, patterns, handler });
    },
    async close() {
      queues.clear();
      unlink?.();
    },
  };
}

/**
 * RabbitMQ through amqplib: durable topic exchanges, persistent messages, publisher confirms,
 * and a connection that is re-established with exponential backoff when it drops (consumers
 * are re-attached on the new connection).
 */
export function createRabbitBus(url: string, logger: Logger): EventBus {
  let model: ChannelModel | undefined;
  let channel: ConfirmChannel | undefined;
  let connecting: Promise<ConfirmChannel> | undefined;
  let closed = false;
  const consumers: { queue: string; exchange: string; patterns: string[]; handler: BusHandler }[] = [];
  const asserted = new Set<string>();

  const attach = async (ch: ConfirmChannel, consumer: (typeof consumers)[number]) => {
    await ch.assertExchange(consumer.exchange, 'topic', { durable: true });
    await ch.assertQueue(consumer.queue, { durable: true });
    for (const pattern of consumer.patterns) await ch.bindQueue(consumer.queue, consumer.exchange, pattern);
    await ch.consume(consumer.queue, (raw: ConsumeMessage | null) => {
      if (!raw) return;
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw.content.toString('utf8')) as Record<string, unknown>;
      } catch {
        logger.error({ queue: consumer.queue }, 'dropping a message that is not JSON');
        ch.nack(raw, false, false);
        return;
      }
      const message: BusMessage = { exchange: raw.fields.exchange, routingKey: raw.fields.routingKey, messageId: String(raw.properties.messageId ?? ''), body };
      // On a channel that closed meanwhile, ack and nack throw; the broker redelivers the
      // message on the next connection anyway, and consumers are idempotent.
      const settle = (action: () => void) => {
        try {
          action();
        } catch (error) {
          logger.debug({ err: error, queue: consumer.queue }, 'channel closed before the message was settled; the broker redelivers it');
        }
      };
      consumer.handler(message).then(
        () => settle(() => ch.ack(raw)),
        (error: unknown) => {
          logger.warn({ err: error, queue: consumer.queue, routingKey: message.routingKey }, 'consumer failed; message requeued');
          setTimeout(() => settle(() => ch.nack(raw, false, true)), 1000).unref();
        },
      );
    });
  };

  /**
   * One connection loop at a time: a connection that drops starts it again (through `ready`), a
   * connection that opens but cannot re-attach the consumers is closed and retried (never kept
   * half set up), and nothing opened after `close()` survives it.
   */
  const connect = async (): Promise<ConfirmChannel> => {
    for (let attempt = 0; ; attempt += 1) {
      if (closed) throw new Error('bus is closed');
      let m: ChannelModel | undefined;
      try {
        const current = await amqp.connect(url);
        m = current;
        current.on('error', (error: Error) => logger.warn({ err: error }, 'RabbitMQ connection error'));
        current.on('close', () => {
          if (model !== current) return;
          model = undefined;
          channel = undefined;
          if (closed) return;
          logger.warn('RabbitMQ connection closed; reconnecting');
          ready().catch(() => undefined);
        });
        const ch = await current.createConfirmChannel();
        // A channel-level error closes only the channel: drop the connection too, so the loop
        // above builds both again.
        ch.on('error', (error: Error) => logger.warn({ err: error }, 'RabbitMQ channel error'));
        ch.on('close', () => {
          if (channel === ch && !closed) current.close().catch(() => undefined);
        });
        await ch.prefetch(64);
        asserted.clear();
        for (const consumer of consumers) await attach(ch, consumer);
        if (closed) throw new Error('bus is closed');
        model = current;
        channel = ch;
        if (attempt > 0) logger.info({ attempt }, 'RabbitMQ reconnected');
        return ch;
      } catch (error) {
        await m?.close().catch(() => undefined);
        if (closed) throw error;
        const delay = Math.min(5_000, 250 * 2 ** attempt);
        logger.warn({ err: error, retryInMs: delay }, 'RabbitMQ not reachable');
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
  };

  const ready = (): Promise<ConfirmChannel> => {
    if (channel) return Promise.resolve(channel);
    connecting ??= connect().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };

  return {
    kind: 'rabbitmq',
    async publish(message) {
      const ch = await ready();
      if (!asserted.has(message.exchange)) {
        await ch.assertExchange(message.exchange, 'topic', { durable: true });
        asserted.add(message.exchange);
      }
      await new Promise<void>((resolve, reject) => {
        ch.publish(
          message.exchange,
          message.routingKey,
          Buffer.from(JSON.stringify(message.body)),
          { persistent: true, messageId: message.messageId, contentType: 'application/json', timestamp: Math.floor(Date.now() / 1000) },
          (error: unknown) => (error ? reject(error instanceof Error ? error : new Error('message not confirmed by the broker')) : resolve()),
        );
      });
    },
    async subscribe(queue, exchange, patterns, handler) {
      const consumer = { queue, exchange, patterns, handler };
      consumers.push(consumer);
      if (channel) await attach(channel, consumer);
      else await ready();
    },
    async close() {
      closed = true;
      await channel?.close().catch(() => undefined);
      await model?.close().catch(() => undefined);
    },
  };
}

export function createEventBus(rabbitmqUrl: string | undefined, logger: Logger): EventBus {
  return rabbitmqUrl ? createRabbitBus(rabbitmqUrl, logger) : createInProcessBus(logger);
}
