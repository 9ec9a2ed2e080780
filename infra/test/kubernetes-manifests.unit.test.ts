// deploy/kubernetes/: every object valid against the Kubernetes API schemas of kubernetes-models
// (generated from Kubernetes' OpenAPI, v1.34: it has resource.k8s.io/v1), and every environment
// variable a container is given one that its service's configuration reader reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as batchV1 from 'kubernetes-models/batch/v1';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as coreV1 from 'kubernetes-models/v1';
import { configReader, readCommonConfig, type Env } from '@hub/config';
import { readIngressConfig } from '../../services/ingress/src/config.ts';
import { readDispatcherConfig } from '../../services/dispatcher/src/config.ts';
import { readProberConfig } from '../../services/prober/src/config.ts';
import { readProjectorConfig } from '../../services/projector/src/config.ts';
import { root } from '../stack/paths.ts';

const dir = join(root, 'deploy', 'kubernetes');

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

interface Container {
  name: string;
  args?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { key: string }; configMapKeyRef?: { name: string; key: string } } }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  readinessProbe?: unknown;
  livenessProbe?: unknown;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

function loadManifests(): K8sObject[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
  return files.flatMap((f) =>
    parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => {
      assert.deepEqual(d.errors, [], `${f}: YAML errors`);
      return d.toJS() as K8sObject;
    }),
  );
}

type Model = new (data: unknown) => { validate(): void };
/** The API groups the manifests use; an object of any other is refused below. */
const GROUPS: Record<string, Record<string, unknown>> = { v1: coreV1, 'apps/v1': appsV1, 'batch/v1': batchV1, 'policy/v1': policyV1, 'networking.k8s.io/v1': networkingV1 };

/** The model class of an object's apiVersion and kind (kubernetes-models/<group>/<version>). */
function modelOf(o: K8sObject): Model {
  const model = GROUPS[o.apiVersion]?.[o.kind] as Model | undefined;
  assert.ok(model, `no Kubernetes model for ${o.apiVersion} ${o.kind}`);
  return model;
}

async function invalidity(o: K8sObject): Promise<string | undefined> {
  const Model = modelOf(o);
  try {
    new Model(o).validate();
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** The names a reader reads given an environment: every name it asks for, whether set or not. */
function namesRead(read: (env: Env) => unknown, values: Record<string, string>): Set<string> {
  const seen = new Set<string>();
  const env = new Proxy(values, {
    get(target, name) {
      if (typeof name === 'string') seen.add(name);
      return Reflect.get(target, name) as unknown;
    },
  });
  try {
    read(env);
  } catch {
    // Problems (a CA file not on this machine) are not the point: which names were read is.
  }
  return seen;
}

/** What each command of the image reads its configuration with (its main.ts). */
const READERS: Record<string, (env: Env) => unknown> = {
  ingress: readIngressConfig,
  dispatcher: readDispatcherConfig,
  prober: readProberConfig,
  projector: readProjectorConfig,
  // infra/image/migrate/main.ts.
  migrate: (env) => readCommonConfig(configReader(env), 0),
};

// Values standing in for the Secret's (the operator creates it: docs/how-to/deploy-kubernetes.md).
const SECRET_VALUES: Record<string, string> = {
  DATABASE_URL: 'postgres://hub:secret@postgres.example.internal:5432/ocpi_hub',
  KAFKA_SASL_USERNAME: 'hub',
  KAFKA_SASL_PASSWORD: 'secret',
  HUB_SECRET_KEY: randomBytes(32).toString('base64'),
};

function workloads(objects: K8sObject[]): Array<{ object: K8sObject; container: Container }> {
  return objects
    .filter((o) => o.kind === 'Deployment' || o.kind === 'Job')
    .flatMap((o) => ((o.spec?.['template'] as { spec: { containers: Container[] } }).spec.containers).map((container) => ({ object: o, container })));
}

function containerEnv(container: Container, configMaps: Map<string, Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    assert.equal(from.secretRef, undefined, `${container.name}: a whole Secret as environment hides which names it sets`);
    const data = configMaps.get(from.configMapRef?.name ?? '');
    assert.ok(data, `${container.name}: envFrom names ConfigMap ${from.configMapRef?.name}, not in the manifests`);
    Object.assign(env, data);
  }
  for (const e of container.env ?? []) {
    const key = e.valueFrom?.secretKeyRef?.key;
    env[e.name] = e.value ?? (key !== undefined ? (SECRET_VALUES[key] ?? 'x') : (configMaps.get(e.valueFrom?.configMapKeyRef?.name ?? '')?.[e.valueFrom?.configMapKeyRef?.key ?? ''] ?? ''));
  }
  return env;
}

test('every object of deploy/kubernetes is valid against the Kubernetes schemas', async () => {
  const objects = loadManifests();
  assert.ok(objects.length >= 10);
  for (const o of objects) assert.equal(await invalidity(o), undefined, `${o.kind} ${o.metadata.name}`);
});

test('the validation refuses what the API server would: a wrong type, a missing required field', async () => {
  const deployment = loadManifests().find((o) => o.kind === 'Deployment');
  assert.ok(deployment);
  const wrongType = structuredClone(deployment);
  (wrongType.spec as Record<string, unknown>)['replicas'] = 'three';
  assert.match((await invalidity(wrongType)) ?? '', /replicas must be integer/);
  const noSelector = structuredClone(deployment);
  delete (noSelector.spec as Record<string, unknown>)['selector'];
  assert.match((await invalidity(noSelector)) ?? '', /selector/);
});

test('every environment name a container gets is one its configuration reader reads', () => {
  const objects = loadManifests();
  const configMaps = new Map(objects.filter((o) => o.kind === 'ConfigMap').map((o) => [o.metadata.name, o.data ?? {}]));
  const seen = new Set<string>();
  for (const { container } of workloads(objects)) {
    const command = container.args?.[0] ?? '';
    const read = READERS[command];
    assert.ok(read, `${container.name}: command ${command} is not one of the image's`);
    seen.add(command);
    const env = containerEnv(container, configMaps);
    const known = namesRead(read, env);
    const unknown = Object.keys(env).filter((n) => !known.has(n));
    assert.deepEqual(unknown, [], `${command}: given ${unknown.join(', ')}, which it does not read`);
    // What must stay secret comes from the Secret, never a ConfigMap or a literal.
    for (const name of ['DATABASE_URL', 'KAFKA_SASL_PASSWORD', 'HUB_SECRET_KEY']) {
      if (name in env) assert.ok(container.env?.some((e) => e.name === name && e.valueFrom?.secretKeyRef), `${command}: ${name} not from a Secret`);
    }
  }
  assert.deepEqual([...seen].sort(), ['dispatcher', 'ingress', 'migrate', 'prober', 'projector']);
});

test('a name no reader reads is caught', () => {
  const known = namesRead(readIngressConfig, { HUB_PUBLIC_URL: 'https://hub.example', HUB_PUBLICURL: 'typo' });
  assert.ok(known.has('HUB_PUBLIC_URL'));
  assert.ok(!known.has('HUB_PUBLICURL'));
});

test('the services have probes, requests and limits, run as non-root and have a disruption budget', () => {
  const objects = loadManifests();
  const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget').map((o) => o.metadata.name);
  for (const { object, container } of workloads(objects).filter((w) => w.object.kind === 'Deployment')) {
    assert.ok(container.readinessProbe && container.livenessProbe, `${object.metadata.name}: probes`);
    assert.ok(container.resources?.requests?.['memory'] && container.resources.limits?.['memory'], `${object.metadata.name}: memory request and limit`);
    const pod = (object.spec?.['template'] as { spec: { securityContext?: { runAsNonRoot?: boolean } } }).spec;
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.ok(budgets.includes(object.metadata.name), `${object.metadata.name}: PodDisruptionBudget`);
  }
  const ingress = objects.find((o) => o.kind === 'Ingress');
  assert.ok((ingress?.spec?.['tls'] as unknown[] | undefined)?.length, 'the partner API Ingress terminates TLS');
  const config = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'ocpi-hub-ingress');
  assert.equal(config?.data?.['HUB_ENV'], 'production');
  assert.match(config?.data?.['HUB_PUBLIC_URL'] ?? '', /^https:\/\//);
});
