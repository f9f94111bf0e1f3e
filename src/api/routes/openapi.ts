import Router from '@koa/router';
import { OPENAPI_PATH, buildOpenApi } from '../openapi.js';
import type { ApiState } from '../state.js';

// GET /v1/openapi.json: the API's own description, unsigned so that tooling can read it; it
// holds nothing that the repository does not (docs/openapi.json is the same document).
export function openApiRoutes() {
  const router = new Router<ApiState>();
  const document = buildOpenApi();
  router.get(OPENAPI_PATH, (ctx) => {
    ctx.body = document;
  });
  return router;
}
