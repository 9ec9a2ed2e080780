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

