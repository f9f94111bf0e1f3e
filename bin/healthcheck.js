#!/usr/bin/env node
// The container's HEALTHCHECK (Dockerfile): exit 0 when /readyz on HEALTH_PORT answers 200,
// 1 otherwise. Every process serves /readyz there whatever its roles (D15, D20), so one
// check fits the web process and the workers alike.
const port = process.env.HEALTH_PORT;
if (!port) {
  process.stderr.write('HEALTH_PORT is not set\n');
  process.exit(1);
}
try {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(4000) });
  process.exit(response.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
