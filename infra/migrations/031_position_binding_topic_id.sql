-- Kafka's topic id (KIP-516) of the topic a consumer group's positions were taken from: a topic
-- deleted and created again gets a new one, which the binding then refuses even when the new topic
-- was refilled past the old end (packages/event-log/src/position-check.ts). Null: bound before the
-- id was read, or brokers that do not name one; filled at the next binding.
alter table position_bindings add column topic_id text;
