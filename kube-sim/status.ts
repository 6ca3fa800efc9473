/**
 * Kubernetes `Status` errors, worded as the API server words them (k8s.io/apimachinery
 * `pkg/api/errors`), so that clients branching on `reason`, `code` or `details` behave the same
 * against kube-sim and against a real cluster.
 */

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** The resource an error is about: `group` is empty for the core group. */
export interface ResourceRef {
  group: string;
  plural: string;
  kind: string;
}

export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'StatusError';
  }

  toStatus(): StatusBody {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

/** `deployments.apps`, `pods`: how the API server names a resource in messages. */
export function qualifiedResource(ref: Pick<ResourceRef, 'group' | 'plural'>): string {
  return ref.group ? `${ref.plural}.${ref.group}` : ref.plural;
}

/** `Deployment.apps`, `Pod`: how Invalid errors name a kind. */
function qualifiedKind(ref: Pick<ResourceRef, 'group' | 'kind'>): string {
  return ref.group ? `${ref.kind}.${ref.group}` : ref.kind;
}

/** One field error of an Invalid answer (k8s.io/apimachinery `pkg/util/validation/field`). */
export interface FieldError {
  field: string;
  type: 'Required value' | 'Invalid value' | 'Unsupported value' | 'Forbidden' | 'Duplicate value' | 'Too long';
  detail?: string;
  value?: unknown;
}

const CAUSE_REASON: Record<FieldError['type'], string> = {
  'Required value': 'FieldValueRequired',
  'Invalid value': 'FieldValueInvalid',
  'Unsupported value': 'FieldValueNotSupported',
  Forbidden: 'FieldValueForbidden',
  'Duplicate value': 'FieldValueDuplicate',
  'Too long': 'FieldValueTooLong',
};

function describeFieldError(e: FieldError): string {
  const value = e.type === 'Invalid value' || e.type === 'Unsupported value' || e.type === 'Duplicate value' ? `: ${JSON.stringify(e.value)}` : '';
  return `${e.type}${value}${e.detail ? `: ${e.detail}` : ''}`;
}

export const errors = {
  notFound(ref: Pick<ResourceRef, 'group' | 'plural'>, name: string): StatusError {
    return new StatusError(404, 'NotFound', `${qualifiedResource(ref)} "${name}" not found`, { name, group: ref.group || undefined, kind: ref.plural });
  },
  /** A path the server does not serve at all (unknown group, version or resource). */
  pathNotFound(): StatusError {
    return new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
  },
  alreadyExists(ref: Pick<ResourceRef, 'group' | 'plural'>, name: string): StatusError {
    return new StatusError(409, 'AlreadyExists', `${qualifiedResource(ref)} "${name}" already exists`, { name, group: ref.group || undefined, kind: ref.plural });
  },
  conflict(ref: Pick<ResourceRef, 'group' | 'plural'>, name: string, why = 'the object has been modified; please apply your changes to the latest version and try again'): StatusError {
    return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(ref)} "${name}": ${why}`, {
      name,
      group: ref.group || undefined,
      kind: ref.plural,
    });
  },
  invalid(ref: Pick<ResourceRef, 'group' | 'kind'>, name: string, fieldErrors: FieldError[]): StatusError {
    const causes = fieldErrors.map((e) => ({ reason: CAUSE_REASON[e.type], message: describeFieldError(e), field: e.field }));
    const listed = fieldErrors.map((e) => `${e.field}: ${describeFieldError(e)}`);
    const summary = listed.length === 1 ? listed[0] : `[${listed.join(', ')}]`;
    return new StatusError(422, 'Invalid', `${qualifiedKind(ref)} "${name}" is invalid: ${summary}`, { name, group: ref.group || undefined, kind: ref.kind, causes });
  },
  /** A 422 that is not about one object's fields, e.g. a JSON patch that does not apply. */
  unprocessable(message: string): StatusError {
    return new StatusError(422, 'Invalid', message, {});
  },
  badRequest(message: string): StatusError {
    return new StatusError(400, 'BadRequest', message);
  },
  forbidden(ref: Pick<ResourceRef, 'group' | 'plural'>, name: string, why: string): StatusError {
    return new StatusError(403, 'Forbidden', `${qualifiedResource(ref)} "${name}" is forbidden: ${why}`, { name, group: ref.group || undefined, kind: ref.plural });
  },
  methodNotAllowed(): StatusError {
    return new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
  },
  unsupportedMediaType(accepted: string[]): StatusError {
    return new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`, {});
  },
  tooLarge(): StatusError {
    return new StatusError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
  },
  expired(message: string): StatusError {
    return new StatusError(410, 'Expired', message);
  },
  gone(message: string): StatusError {
    return new StatusError(410, 'Gone', message);
  },
  unauthorized(): StatusError {
    return new StatusError(401, 'Unauthorized', 'Unauthorized');
  },
  unavailable(): StatusError {
    return new StatusError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request (kube-sim is set unavailable)', { retryAfterSeconds: 1 });
  },
  internal(message: string): StatusError {
    return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, {});
  },
};

/** The `Status` a successful delete answers for kinds whose delete does not return the object. */
export function successStatus(details: StatusDetails): StatusBody {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details, code: 200 };
}
