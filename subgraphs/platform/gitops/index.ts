/**
 * GitOps plumbing of the platform: the fleet repository writer (used by the app controller), and
 * the local profile's stand-ins for Flux (the local applier) and for DNS + certificates + ingress
 * controller (the local HTTPS ingress). See README.md in this folder.
 */
export {
  appFolder,
  createLocalBareRepo,
  isDnsLabel,
  openFleetRepo,
  parseVclusterPath,
  safeRepoPath,
  TENANTS_ROOT,
  vclusterFolder,
  type AppRef,
  type FleetCommit,
  type FleetRepo,
  type FleetRepoOptions,
  type FleetWriteResult,
  type VclusterRef,
} from './fleet-repo.js';
export {
  appliedRevision,
  describeKubeError,
  FIELD_MANAGER,
  FLUX_NAME_LABEL,
  FLUX_NAMESPACE_LABEL,
  FLUX_PRUNE_ANNOTATION,
  KUSTOMIZATION,
  startLocalApplier,
  type AppliedRevision,
  type ApplierClusterResult,
  type ApplierPass,
  type LocalApplier,
  type LocalApplierOptions,
} from './local-applier.js';
export {
  createIngressCa,
  startLocalIngress,
  type IngressAnswer,
  type IngressCa,
  type IngressCluster,
  type IngressClusterResolver,
  type LocalIngress,
  type LocalIngressOptions,
} from './local-ingress.js';
export { CLUSTER_NAME_LABEL, virtualClustersFromHost, type VirtualClusterEntry } from './virtual-clusters.js';
export { commitFromRevision, GitError } from './git.js';
