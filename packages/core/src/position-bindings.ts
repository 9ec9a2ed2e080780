import type { TopicBinding } from './event-log.ts';

// Which topic a consumer group's stored positions belong to (migrations 015 and 031), kept by the
// store; the event log checks them (StoredPositions.loadBinding and saveBinding).

export interface PositionBindingStore {
  load(consumerGroup: string, topic: string): Promise<TopicBinding | undefined>;
  save(consumerGroup: string, topic: string, binding: TopicBinding): Promise<void>;
}
