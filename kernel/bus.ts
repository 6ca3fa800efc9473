import amqp, { type ChannelModel, type ConfirmChannel, type ConsumeMessage } from 'amqplib';
import { EventEmitter } from 'node:events';
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

export function createInProcessBus(logger: Logger): EventBus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  const queues = new Map<string, { exchange: string; patterns: string[]; handler: BusHandler }>();
  return {
    kind: 'in-process',
    async publish(message) {
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
      emitter.emit('published', message);
    },
    async subscribe(queue, exchange, patterns, handler) {
      queues.set(queue, { exchange, patterns, handler });
    },
    async close() {
      queues.clear();
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
      consumer.handler(message).then(
        () => ch.ack(raw),
        (error: unknown) => {
          logger.warn({ err: error, queue: consumer.queue, routingKey: message.routingKey }, 'consumer failed; message requeued');
          setTimeout(() => ch.nack(raw, false, true), 1000).unref();
        },
      );
    });
  };

  const connect = async (): Promise<ConfirmChannel> => {
    for (let attempt = 0; ; attempt += 1) {
      if (closed) throw new Error('bus is closed');
      try {
        const m = await amqp.connect(url);
        const ch = await m.createConfirmChannel();
        await ch.prefetch(64);
        m.on('error', (error: Error) => logger.warn({ err: error }, 'RabbitMQ connection error'));
        m.on('close', () => {
          if (closed) return;
          logger.warn('RabbitMQ connection closed; reconnecting');
          model = undefined;
          channel = undefined;
          asserted.clear();
          connecting = connect().catch(() => undefined as never);
        });
        asserted.clear();
        for (const consumer of consumers) await attach(ch, consumer);
        model = m;
        channel = ch;
        if (attempt > 0) logger.info({ attempt }, 'RabbitMQ reconnected');
        return ch;
      } catch (error) {
        const delay = Math.min(30_000, 250 * 2 ** attempt);
        logger.warn({ err: error, retryInMs: delay }, 'RabbitMQ not reachable');
        await new Promise((resolve) => setTimeout(resolve, delay));
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
