/** Kubeconfig files for the clusters kube-sim serves. */
import { stringify } from 'yaml';

export interface KubeconfigSpec {
  /** Cluster, user and context name. */
  name: string;
  server: string;
  token?: string;
  namespace?: string;
  /** PEM of the CA that signed an HTTPS server's certificate. */
  certificateAuthority?: string;
}

/**
 * A kubeconfig (YAML) for one cluster. A plain-HTTP server is marked
 * `insecure-skip-tls-verify`: @kubernetes/client-node refuses `http:` servers without it.
 */
export function buildKubeconfig(spec: KubeconfigSpec): string {
  const https = spec.server.startsWith('https:');
  const cluster: Record<string, unknown> = { server: spec.server };
  if (https && spec.certificateAuthority) cluster['certificate-authority-data'] = Buffer.from(spec.certificateAuthority).toString('base64');
  else cluster['insecure-skip-tls-verify'] = true;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [{ name: spec.name, cluster }],
    users: [{ name: spec.name, user: spec.token ? { token: spec.token } : {} }],
    contexts: [{ name: spec.name, context: { cluster: spec.name, user: spec.name, namespace: spec.namespace ?? 'default' } }],
    'current-context': spec.name,
  });
}
