import type { ValidateFunction } from 'ajv';
import { invalidRequest } from '../../shared/platform/errors.js';
import { toInvalidRequest } from '../../shared/platform/validation.js';
import type { ApiMiddleware } from '../state.js';

// JSON Schema validation of the verified body; an empty body counts as {} only where the
// endpoint's fields are all optional.
export const validateBody = <T>(validate: ValidateFunction<T>, options: { emptyIsObject: boolean }): ApiMiddleware =>
  async (ctx, next) => {
    if (!ctx.state.bodyIsJson) throw invalidRequest('RS_ERROR_WRONG_SYNTAX', 'the body is not valid JSON');
    if (ctx.state.body === undefined) {
      if (!options.emptyIsObject) throw invalidRequest('RS_ERROR_WRONG_SYNTAX', 'a JSON body is required');
      ctx.state.body = {};
    }
    if (!validate(ctx.state.body)) throw toInvalidRequest(validate.errors ?? []);
    await next();
  };
