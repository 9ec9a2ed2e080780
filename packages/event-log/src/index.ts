export * from './kafka-event-log.ts';
export * from './topics-admin.ts';
export type { Consumer, EachBatchPayload, EachMessagePayload, KafkaMessage } from 'kafkajs';
export * from './kafka-failure.ts';
export * from './kafka-access.ts';
