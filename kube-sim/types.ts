/**
 * The shapes kube-sim stores and serves. Objects are plain JSON as they travel over the wire:
 * kube-sim checks what the API server checks (names, required fields, resourceVersion) and
 * otherwise keeps whatever a client sent, so `spec` and `status` stay loosely typed.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  // Specs and statuses of every kind pass through kube-sim; each controller reads the fields it knows.
  spec?: any;
  status?: any;
  [key: string]: unknown;
}

/** A stored object: name, namespace (empty for cluster-scoped), uid and resourceVersion are set. */
export interface StoredObject extends KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta & { name: string; uid: string; resourceVersion: string; creationTimestamp: string };
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Kubernetes timestamps: RFC 3339 with second precision, as the API server writes them. */
export function timestamp(date: Date = new Date()): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
