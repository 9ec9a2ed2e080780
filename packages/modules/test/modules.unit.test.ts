import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { locationEventTypes, tariffEventTypes, topics } from '@hub/events';
import { hubErrors } from '@hub/ocpi';
import {
  consumedDeliveryModules,
  deliveredKinds,
  deliveryRuleOf,
  isProjectedModule,
  modulesServedIn,
  moduleOfDelivery,
  ocpiModules,
  projectedModules,
  projectionOf,
  receivingRoleOf,
  topicDefinitions,
  topicOf,
  type OcpiModule,
} from '../src/modules.ts';

// The module table is what every consumer of a module's name reads: these tests keep its
// entries consistent with the topics, the event schemas and the error registry.

const schemasDir = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..', 'schemas', 'events');
const modules = Object.entries(ocpiModules as Record<string, OcpiModule>);

describe('the module table', () => {
  it('names each module by its OCPI module identifier and a topic that exists', () => {
    for (const [name, module] of modules) {
      assert.equal(module.id, name);
      assert.ok(Object.hasOwn(topics, module.topic), `${name}: topic ${module.topic}`);
    }
  });

  it("lists event types of the module's own topic, each with its payload schema in schemas/events", () => {
    for (const [name, module] of modules) {
      const types = Object.values(module.eventTypes);
      assert.ok(types.length > 0, `${name} has event types`);
      for (const type of types) {
        // ocpi.sessions.v1 holds ocpi.sessions.*.v1 events, hub.registry.v1 hub.registry.*.v1 ones.
        assert.ok(type.startsWith(topics[module.topic].replace(/v\d+$/, '')), `${type} belongs to ${topicOf(module.id as keyof typeof ocpiModules)}`);
        assert.ok(existsSync(join(schemasDir, `${type}.json`)), `schemas/events/${type}.json`);
      }
    }
  });

  it("declares its HTTP surface in its folder: endpoints below its own path, routes tagged with its id under its 2.2.1 endpoint", () => {
    for (const [name, module] of modules) {
      const served = Object.entries(module.http.endpoints);
      assert.ok(served.length > 0, `${name} is served in some version`);
      for (const [version, endpoints] of served) {
        assert.ok(endpoints && endpoints.length > 0, `${name} ${version}`);
        for (const e of endpoints ?? []) assert.ok(e.path === name || e.path.startsWith(`${name}/`), `${name} ${version}: ${e.path}`);
      }
      assert.ok(module.http.routes.length > 0, `${name} has routes`);
      for (const route of module.http.routes) {
        assert.equal(route.module, name);
        assert.ok(route.path.startsWith(`/ocpi/2.2.1/${name}`), route.path);
      }
    }
    assert.deepEqual(modulesServedIn('2.1.1').map((m) => m.id), ['locations', 'tariffs', 'sessions', 'cdrs', 'tokens', 'commands']);
  });

  it('declares the topics it owns, each once; hubclientinfo reads the registry topic and owns none', () => {
    const names = topicDefinitions().map((d) => d.name);
    assert.deepEqual([...names].sort(), Object.values(topics).sort());
    for (const [name, module] of modules) {
      if (module.topic === 'registry') assert.deepEqual(module.topics, [], name);
      else assert.ok(module.topics.some((d) => d.name === topics[module.topic]), `${name} owns ${topics[module.topic]}`);
    }
  });

  it('names the receiving role of a module by who owns it, and none for a name the table does not hold', () => {
    assert.equal(receivingRoleOf('locations'), 'EMSP');
    assert.equal(receivingRoleOf('tokens'), 'CPO');
    assert.equal(receivingRoleOf('commands'), 'CPO');
    assert.equal(receivingRoleOf('hubclientinfo'), undefined);
    // A partner's version details may name anything: inherited property names are no modules.
    for (const name of ['credentials', 'toString', '__proto__', 'constructor', '', 'LOCATIONS']) assert.equal(receivingRoleOf(name), undefined, name);
  });

  it('gives each unknown-object answer a code of the error registry', () => {
    for (const [name, module] of modules) {
      assert.ok(Object.hasOwn(hubErrors, module.notFound.pull), `${name}: ${module.notFound.pull}`);
      assert.ok(Object.hasOwn(hubErrors, module.notFound.push), `${name}: ${module.notFound.push}`);
    }
    // Interface document, Locations: a push to an unknown location is 2003 with HTTP 200; a pull is 404.
    assert.equal(hubErrors[ocpiModules.locations.notFound.push].ocpi, 2003);
    assert.equal(hubErrors[ocpiModules.locations.notFound.pull].http, 404);
  });

  it('projects locations, tariffs and tokens, each into its own table', () => {
    assert.deepEqual([...projectedModules], ['locations', 'tariffs', 'tokens']);
    assert.equal(new Set(projectedModules.map((m) => projectionOf(m).table)).size, projectedModules.length);
    assert.equal(isProjectedModule('sessions'), false);
    assert.equal(isProjectedModule('hubclientinfo'), false);
    assert.equal(isProjectedModule('tariffs'), true);
    assert.throws(() => projectionOf('sessions' as never));
  });

  it('only a location PUT and a tariff PUT replace the whole object (a rebuild loads nothing for them)', () => {
    const locations = projectionOf('locations');
    const tariffs = projectionOf('tariffs');
    assert.equal(locations.replacesWholeObject(locationEventTypes.locationPut), true);
    assert.equal(tariffs.replacesWholeObject(tariffEventTypes.tariffPut), true);
    for (const type of [locationEventTypes.locationPatched, locationEventTypes.evsePut, locationEventTypes.evsePatched, locationEventTypes.connectorPut, locationEventTypes.connectorPatched, tariffEventTypes.tariffPut, 'unknown']) {
      assert.equal(locations.replacesWholeObject(type), false, `locations: ${type}`);
    }
    assert.equal(tariffs.replacesWholeObject(locationEventTypes.locationPut), false, 'a location PUT on the tariffs topic replaces no tariff');
  });

  it('finds an EVSE inside a stored location, and a tariff as stored', () => {
    const location = { id: 'LOC1', evses: [{ uid: 'EVSE-1', connectors: [{ id: '1' }] }] };
    const path = { countryCode: 'NL', partyId: 'CPO', id: 'LOC1' };
    assert.deepEqual(projectionOf('locations').find(location, { ...path, evseUid: 'evse-1' }), location.evses[0]);
    assert.equal(projectionOf('locations').find(location, { ...path, evseUid: 'EVSE-2' }), undefined);
    assert.equal(projectionOf('tariffs').find(location, path), location);
  });

  it('has one delivery rule per delivered kind, as the interface document sends them', () => {
    const cpo = { countryCode: 'BE', partyId: 'CPO' };
    const emsp = { countryCode: 'NL', partyId: 'EMP' };
    const row = (objectId: string, payload: Record<string, unknown> = {}) => ({ emsp, cpo, objectId, payload });
    // Interface document, Receiver endpoints: session PUT {receiver}/{cpo cc}/{cpo pid}/{session id}.
    assert.equal(deliveryRuleOf('session').method, 'PUT');
    assert.equal(deliveryRuleOf('session').url('https://emsp.example.com/sessions/', row('S 1'), '2.2.1'), 'https://emsp.example.com/sessions/BE/CPO/S%201');
    // A session row keeps the newest state, by last_updated.
    assert.deepEqual(deliveryRuleOf('session').keeps, { newestBy: 'last_updated' });
    // CDR POST {receiver}; every CDR is delivered.
    assert.equal(deliveryRuleOf('cdr').method, 'POST');
    assert.equal(deliveryRuleOf('cdr').url('https://emsp.example.com/cdrs//', row('C1'), '2.2.1'), 'https://emsp.example.com/cdrs');
    assert.equal(deliveryRuleOf('cdr').keeps, 'every');
    // mod_commands.asciidoc, CommandResult: POSTed to the response_url as the eMSP gave it.
    assert.equal(deliveryRuleOf('command_result').url('https://emsp.example.com/cb/1/', row('X'), '2.2.1'), 'https://emsp.example.com/cb/1/');
    assert.equal(moduleOfDelivery('cdr').topic, 'cdrs');
    assert.equal(deliveryRuleOf('session').receiverModule, 'sessions');
    // mod_tokens.asciidoc, Receiver interface: PUT {receiver}/{emsp cc}/{emsp pid}/{uid}?type=, to the CPO.
    assert.equal(deliveryRuleOf('token').url('https://cpo.example.com/tokens/', row('ABC 1|APP_USER'), '2.2.1'), 'https://cpo.example.com/tokens/NL/EMP/ABC%201?type=APP_USER');
    assert.equal(deliveryRuleOf('token').url('https://cpo.example.com/tokens', row('A|B|RFID'), '2.2.1'), 'https://cpo.example.com/tokens/NL/EMP/A%7CB?type=RFID');
    // A 2.1.1 Token URL has no type (ocpi-2.1.1/mod_tokens.md 2.1.2).
    assert.equal(deliveryRuleOf('token').url('https://cpo.example.com/tokens', row('ABC 1|APP_USER'), '2.1.1'), 'https://cpo.example.com/tokens/NL/EMP/ABC%201');
    assert.equal(deliveryRuleOf('token').recipient, 'CPO');
    assert.equal(deliveryRuleOf('session').recipient, 'EMSP');
    // mod_hub_client_info.asciidoc, Receiver interface: PUT {receiver}/{country_code}/{party_id} of the
    // ClientInfo, to either role; sent on an enabled rule even with the other side suspended, and
    // without routing headers (transport_and_format.asciidoc, Message Routing).
    const info = { country_code: 'BE', party_id: 'CPO', role: 'CPO', status: 'SUSPENDED', last_updated: '2026-01-01T00:00:00Z' };
    assert.equal(deliveryRuleOf('client_info').url('https://emsp.example.com/clientinfo/', row('BE/CPO/CPO', info), '2.2.1'), 'https://emsp.example.com/clientinfo/BE/CPO');
    assert.equal(deliveryRuleOf('client_info').method, 'PUT');
    assert.equal(deliveryRuleOf('client_info').recipient, 'row');
    assert.equal(deliveryRuleOf('client_info').receiverModule, 'hubclientinfo');
    assert.equal(deliveryRuleOf('client_info').route, 'rule');
    assert.equal(deliveryRuleOf('client_info').routingHeaders, false);
    assert.equal(deliveryRuleOf('session').route ?? 'active', 'active');
    // mod_charging_profiles.asciidoc: a result is POSTed to the eMSP's response_url; an updated
    // ActiveChargingProfile is PUT {sender}/{session_id} at the eMSP's SENDER interface, the newest kept by
    // the time it was calculated (ActiveChargingProfile class: start_date_time).
    assert.equal(deliveryRuleOf('charging_profile_result').url('https://emsp.example.com/cp/1', row('X'), '2.2.1'), 'https://emsp.example.com/cp/1');
    assert.equal(deliveryRuleOf('charging_profile_result').method, 'POST');
    assert.equal(deliveryRuleOf('active_charging_profile').url('https://emsp.example.com/chargingprofiles/', row('S 1'), '2.2.1'), 'https://emsp.example.com/chargingprofiles/S%201');
    assert.deepEqual([deliveryRuleOf('active_charging_profile').method, deliveryRuleOf('active_charging_profile').keeps, deliveryRuleOf('active_charging_profile').interfaceRole], ['PUT', { newestBy: 'start_date_time' }, 'SENDER']);
    assert.equal(moduleOfDelivery('active_charging_profile').id, 'chargingprofiles');
    assert.equal(moduleOfDelivery('charging_profile_result').id, 'chargingprofiles');
  });

  it('declares what the store and the dispatcher do differently per kind and read model, so neither names one', () => {
    // A Session and a CDR name their eMSP by cdr_token (mod_cdrs.asciidoc, CdrToken class): what a
    // 2.1.1 row held for the hub is attributed by.
    assert.deepEqual(deliveredKinds.filter((k) => deliveryRuleOf(k).emspNamedBy === 'cdr_token'), ['session', 'cdr']);
    // Decision 0008: translated at the edge; 2.1.1 Sessions and CDRs carry their whole Location.
    assert.deepEqual(deliveryRuleOf('session').translation, { object: 'Session', locationIdAt: ['location_id'] });
    assert.deepEqual(deliveryRuleOf('cdr').translation, { object: 'CDR', locationIdAt: ['cdr_location', 'id'] });
    assert.deepEqual([deliveryRuleOf('token').translation, deliveryRuleOf('command_result').translation], [{ object: 'Token' }, { object: 'CommandResult' }]);
    for (const k of ['client_info', 'charging_profile_result', 'active_charging_profile'] as const) assert.deepEqual(deliveryRuleOf(k).translation, { unchangedIn: '2.3.0' }, k);
    // mod_tokens.asciidoc: an eMSP's token goes to every routed CPO unless OCPI-to names one, a PATCH
    // merged into the token each CPO holds; mod_sessions.asciidoc, PATCH Method: into the CPO's session.
    assert.deepEqual(deliveredKinds.filter((k) => deliveryRuleOf(k).toEveryRoutedCpo === true), ['token']);
    assert.deepEqual(deliveredKinds.flatMap((k) => (deliveryRuleOf(k).patchMergesInto ? [[k, deliveryRuleOf(k).patchMergesInto]] : [])), [['session', 'owners-object'], ['token', 'recipients-row']]);
    // Decision 0012: only tariffs have prices a 2.2.1 or 2.1.1 reader is given excluding taxes.
    assert.deepEqual(projectedModules.filter((m) => projectionOf(m).pricesExcludeTaxesColumn !== undefined), ['tariffs']);
    assert.equal(projectionOf('tariffs').pricesExcludeTaxesColumn, 'prices_exclude_taxes');
  });

  it('turns the sessions, CDRs and tokens topics into deliveries in the dispatcher', () => {
    for (const id of consumedDeliveryModules) assert.ok(ocpiModules[id].delivery, `${id} has a delivery rule`);
    // ClientInfo rows come from the registry consumer, not the delivery consumer.
    assert.equal((consumedDeliveryModules as readonly string[]).includes('hubclientinfo'), false);
  });
});
