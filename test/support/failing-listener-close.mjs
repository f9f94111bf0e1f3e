// Loaded into a service process with NODE_OPTIONS="--import <this file>": closing the
// HTTP listener on the process's PORT throws, as a close() that fails at shutdown does, so
// that a test can see what the rest of the shutdown does then (D12). Every other server
// closes as usual. Plain JavaScript: it loads before tsx.
import http from 'node:http';

const port = Number(process.env.PORT);
const close = http.Server.prototype.close;
http.Server.prototype.close = function closeOrFail(...args) {
  if (this.address()?.port === port) throw new Error('the public listener failed to close');
  return close.apply(this, args);
};
