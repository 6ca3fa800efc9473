// Container health check (the image's HEALTHCHECK runs `node docker/healthcheck.mjs`; slim
// images have no curl). Exits 0 when the service answers its liveness route, 1 otherwise.
//
// Subgraphs serve `/healthz`; the edge serves `{BASE_PATH}/healthz` (BASE_PATH defaults to
// `/api`), so both are tried. The port is PORT when set, otherwise the default port of the
// service named on the container's command line (edge 8000, auth 8081, cicd 8087,
// platform 8090), as kernel/config.ts does.
import { readFileSync } from 'node:fs';

const defaultPorts = { edge: 8000, auth: 8081, cicd: 8087, platform: 8090 };

function servicePort() {
  if (process.env.PORT?.trim()) return process.env.PORT.trim();
  try {
    // PID 1 is `node dist/main.js <service>` (or an init such as tini running it).
    const args = readFileSync('/proc/1/cmdline', 'utf8').split('\0');
    const service = args.find((arg) => Object.hasOwn(defaultPorts, arg));
    if (service) return String(defaultPorts[service]);
  } catch {
    // not on Linux or /proc unavailable: fall through to the edge's port
  }
  return String(defaultPorts.edge);
}

const port = servicePort();
const basePath = (process.env.BASE_PATH ?? '/api').trim().replace(/\/+$/, '');
const paths = [...new Set(['/healthz', `${basePath}/healthz`])];

for (const path of paths) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(3000) });
    if (response.ok) process.exit(0);
  } catch {
    // not listening (yet) or timed out: try the next path
  }
}
process.exit(1);
