/**
 * The message validators compiled ahead of time that messages.ts looks up before compiling: none here,
 * so Node (the CLI, the library) compiles each schema with ajv at first use and parses no generated code.
 * The agent page, which carries no compiler, bundles ts/web/page-validators.ts in place of this module
 * (scripts/build-web.mjs): the precompiled validators of the built-ins it plays (ts/spec/precompiled/).
 */
import { precompiledTable, type PrecompiledTable } from './message-schema.js';

export const PRECOMPILED: PrecompiledTable = precompiledTable([]);
