import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// One public HTTP listener per process; the api role answers on it, the realtime role
// attaches Socket.IO to it. HEALTH_PORT, when set, serves health and metrics (D20, D25).
export type RunningHttp = { server: Server; url: string; close: () => Promise<void> };

export async function startHttpServer(port: number, handler: RequestListener): Promise<RunningHttp> {
  const server = createServer(handler);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '0.0.0.0', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
