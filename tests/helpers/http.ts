export interface HttpResult {
  status: number;
  headers: Headers;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  json: any;
  text: string;
}

export interface HttpOptions {
  token?: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is (with Content-Type application/json unless headers say otherwise). */
  raw?: string;
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string>;
  headers?: Record<string, string>;
}

/** A small HTTP client for one base URL, as the e2e tests call the edge. */
export function httpClient(base: () => string) {
  return async function call(method: string, path: string, options: HttpOptions = {}): Promise<HttpResult> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.form) {
      body = new URLSearchParams(options.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else {
      body = options.raw ?? (options.body !== undefined ? JSON.stringify(options.body) : undefined);
      if (body !== undefined) headers['content-type'] ??= 'application/json';
    }
    const url = path.startsWith('http') ? path : `${base()}${path}`;
    const response = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, json, text };
  };
}

/** The spec's error envelope with this status and code, and the request id of the response. */
export function expectError(result: HttpResult, status: number, code: string): void {
  expect({ status: result.status, code: result.json?.error?.code }).toEqual({ status, code });
  expect(result.json).toEqual({ error: { code, message: expect.any(String), request_id: expect.any(String) } });
  expect(result.json.error.request_id).toBe(result.headers.get('x-request-id'));
}
