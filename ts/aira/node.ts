/**
 * The Node-only half of Aira (`aigenora/aira/node`): the MCP server (stdio and Streamable HTTP) and the
 * database-backed document store. Everything browser-safe is in ./index.ts.
 */
export { Bindings, BOUND_PREFIX, MAX_BOUND_TOOLS, type BindingOptions, type BindingSnapshot, type BoundFacts } from './mcp/bindings.js';
export {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_SESSIONS,
  MCP_PATH,
  McpListenError,
  parseListen,
  serveAiraMcpHttp,
  type AiraMcpHttpOptions,
  type ServedAiraMcp,
} from './mcp/http.js';
export { bindingSnapshot, DEFAULT_BIND_TTL_MS, openTaskSession, type SessionAuthority, type TaskSessionOptions } from './mcp/open.js';
export { bracketScript, parseScript, resolveRefs, runScript, Script, ScriptError, ScriptStep, type ScriptRun } from './mcp/script.js';
export {
  CAPSULE_URI,
  createAiraMcpSession,
  paramsRefusal,
  SERVER_NAME,
  summaryLine,
  toolResult,
  TRACE_URI,
  type AiraMcpSession,
  type AiraMcpSessionOptions,
  type McpTask,
} from './mcp/server.js';
export { serveAiraMcpStdio, STDIO_MAX_MESSAGE_BYTES, StdioLineTransport, type StdioServed } from './mcp/stdio.js';
export { AIRA_DOC_MIGRATIONS, DbDocStore, type DbDocStoreOptions } from './doc/db-store.js';
export { harborRinPolicy, rinPolicyFromConfig, rinPolicyFromText } from './rin/local-policy.js';
