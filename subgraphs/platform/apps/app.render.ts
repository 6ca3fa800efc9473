import { stringify } from 'yaml';
import type { Autoscaling, HealthCheck } from './app.entity.js';

/** The PlatformApp custom resource: an app's desired state on the cluster hosting its CloudSpace. */
export const PLATFORM_APP = { group: 'platform.cloudops.dev', version: 'v1alpha1', plural: 'platformapps', kind: 'PlatformApp' } as const;
export const APP_NAMESPACE = 'default';
export const LABELS = { app: 'app.kubernetes.io/name', managedBy: 'app.kubernetes.io/managed-by', appId: 'cloudops.dev/app-id', tenant: 'cloudops.dev/tenant' } as const;
export const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';

/** An environment variable in desired state: a value, or a key of the app's Secret (never in Git). */
export type EnvSpec = { name: string; value: string } | { name: string; secretKey: string };

/** The `spec` of a PlatformApp. */
export interface PlatformAppSpec {
  appId: string;
  tenantId: string;
  cloudspaceId: string;
  vcluster: string;
  image: string;
  port: number;
  replicas: number;
  resources: { cpuRequest: string; memoryRequest: string };
  tls: boolean;
  address: string;
  autoscaling: Autoscaling | null;
  env: EnvSpec[];
  healthCheck: HealthCheck | null;
  restartedAt: string | null;
  generation: number;
}

/** The Secret holding an app's secret environment values in its virtual cluster (created by the platform, not Git). */
export const envSecretName = (app: string) => `${app}-env`;

/**
 * The manifests of one app, as committed to the fleet repository: Deployment, Service, Ingress
 * (TLS through a cert-manager annotation when `tls`), and an HPA when autoscaling. Each file is
 * one YAML document; the GitOps controller applies the folder.
 */
export function renderManifests(name: string, spec: PlatformAppSpec): Record<string, string> {
  const labels = { [LABELS.app]: name, [LABELS.managedBy]: 'cloudops-platform', [LABELS.appId]: spec.appId };
  const selector = { [LABELS.app]: name };
  const env = spec.env.map((e) => ('value' in e ? { name: e.name, value: e.value } : { name: e.name, valueFrom: { secretKeyRef: { name: envSecretName(name), key: e.secretKey } } }));
  const probe = spec.healthCheck
    ? { httpGet: { path: spec.healthCheck.path, port: spec.healthCheck.port }, initialDelaySeconds: spec.healthCheck.initialDelaySecs, periodSeconds: spec.healthCheck.periodSecs }
    : undefined;
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: APP_NAMESPACE, labels },
    spec: {
      ...(spec.autoscaling ? {} : { replicas: spec.replicas }),
      revisionHistoryLimit: 20,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: { ...selector, [LABELS.appId]: spec.appId }, ...(spec.restartedAt ? { annotations: { [RESTARTED_AT]: spec.restartedAt } } : {}) },
        spec: {
          containers: [
            {
              name: 'app',
              image: spec.image,
              ports: [{ containerPort: spec.port, name: 'http' }],
              resources: { requests: { cpu: spec.resources.cpuRequest, memory: spec.resources.memoryRequest } },
              ...(env.length > 0 ? { env } : {}),
              ...(probe ? { readinessProbe: probe, livenessProbe: probe } : {}),
            },
          ],
        },
      },
    },
  };
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: APP_NAMESPACE, labels },
    spec: { selector, ports: [{ name: 'http', port: 80, targetPort: spec.port }] },
  };
  const ingress = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: APP_NAMESPACE, labels, ...(spec.tls ? { annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' } } : {}) },
    spec: {
      ...(spec.tls ? { tls: [{ hosts: [spec.address], secretName: `${name}-tls` }] } : {}),
      rules: [{ host: spec.address, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name, port: { number: 80 } } } }] } }],
    },
  };
  const files: Record<string, string> = {
    'deployment.yaml': stringify(deployment),
    'service.yaml': stringify(service),
    'ingress.yaml': stringify(ingress),
  };
  if (spec.autoscaling) {
    files['hpa.yaml'] = stringify({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name, namespace: APP_NAMESPACE, labels },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
        minReplicas: spec.autoscaling.minReplicas,
        maxReplicas: spec.autoscaling.maxReplicas,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.autoscaling.targetCpuPercent } } }],
      },
    });
  }
  return files;
}
