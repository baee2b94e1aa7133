/**
 * The agent page's stand-in for ts/spec/compile.ts (scripts/build-web.mjs bundles it instead): the page
 * validates messages with the built-ins' precompiled validators only, so it carries no JSON Schema
 * compiler and its CSP allows no eval. A spec without one is refused with a typed error.
 */
import type { SchemaValidator } from '../spec/message-schema.js';
import { ValidatorUnavailable } from '../spec/errors.js';

const refuse = (): never => {
  throw new ValidatorUnavailable('this page plays the built-in protocols only: a spec that is not one of them needs the CLI');
};

export function schemaCompiler(): (schema: Record<string, unknown>) => SchemaValidator {
  return refuse;
}

export const makeAjv = refuse;
