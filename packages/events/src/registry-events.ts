import { topics, type TopicDefinition } from './topics.ts';
// Registry audit events on hub.registry.v1 (key cc/pid/role, or the platform id for platform-wide
// changes). Their payload schemas are schemas/events/<type>.json.
export const registryEventTypes = {
  partyRegistered: 'hub.registry.party-registered.v1',
  credentialsRegistered: 'hub.registry.credentials-registered.v1',
  credentialsUpdated: 'hub.registry.credentials-updated.v1',
  credentialsDeleted: 'hub.registry.credentials-deleted.v1',
  endpointOverridden: 'hub.registry.endpoint-overridden.v1',
  routingRuleChanged: 'hub.registry.routing-rule-changed.v1',
  partySuspended: 'hub.registry.party-suspended.v1',
  partyReinstated: 'hub.registry.party-reinstated.v1',
  platformHealthChanged: 'hub.registry.platform-health-changed.v1',
} as const;

export type RegistryEventType = (typeof registryEventTypes)[keyof typeof registryEventTypes];

/**
 * hub.registry.v1: the registry's audit trail, kept forever, in one partition for one total order (a
 * party's registration before its routing rules). The hub's own topic, not a module's.
 */
export const registryTopicDefinition: TopicDefinition = {
  name: topics.registry,
  partitions: 1,
  replicationFactor: 3,
  config: { 'retention.ms': '-1', 'min.insync.replicas': '2', 'cleanup.policy': 'delete' },
  description: 'Registry audit trail: parties, credentials, routing rules, endpoint overrides, health; one partition for one total order',
};
