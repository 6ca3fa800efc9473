/**
 * The simulated nodes (`kube-sim-node-1`...): Ready, with capacity and allocatable, created at
 * start. Pods are spread over them; their metrics add up to the nodes' metrics.
 */
import type { SimCluster } from '../cluster.js';
import { timestamp } from '../types.js';
import type { Controller } from './index.js';

export const NODE_CAPACITY = { cpu: '4', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' };
export const NODE_ALLOCATABLE = { cpu: '3800m', memory: '15Gi', pods: '110', 'ephemeral-storage': '95Gi' };

export function startNodes(cluster: SimCluster): Controller {
  const nodes = cluster.type('nodes');
  const now = timestamp();
  for (let i = 1; i <= cluster.options.nodes; i += 1) {
    const name = `kube-sim-node-${i}`;
    const node = cluster.create(nodes, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'node.kubernetes.io/instance-type': 'kube-sim',
          ...(i === 1 ? { 'node-role.kubernetes.io/control-plane': '' } : {}),
        },
      },
      spec: { podCIDR: `10.244.${i}.0/24`, podCIDRs: [`10.244.${i}.0/24`] },
    });
    const condition = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, lastHeartbeatTime: now, lastTransitionTime: now });
    cluster.updateStatus(nodes, {
      ...node,
      status: {
        capacity: NODE_CAPACITY,
        allocatable: NODE_ALLOCATABLE,
        conditions: [
          condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
          condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
          condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
          condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
        ],
        addresses: [
          { type: 'InternalIP', address: `172.18.0.${i + 1}` },
          { type: 'Hostname', address: name },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: {
          machineID: `kube-sim-${i}`,
          systemUUID: `kube-sim-${i}`,
          bootID: `kube-sim-${i}`,
          kernelVersion: '6.1.0-kube-sim',
          osImage: 'kube-sim (simulated node)',
          containerRuntimeVersion: 'containerd://1.7.0-kube-sim',
          kubeletVersion: 'v1.31.0-kube-sim',
          kubeProxyVersion: 'v1.31.0-kube-sim',
          operatingSystem: 'linux',
          architecture: 'amd64',
        },
      },
    });
  }
  return { stop: () => {} };
}
