/**
 * `aigenora web`: serves the agent page (ts/web/page.ts, bundled by scripts/build-web.mjs) on
 * loopback: the page itself, the WASM core, and the spec.json texts of the protocols it plays. The
 * page holds its key and its sessions in the browser; this server only hands it files.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTINS, builtinDir } from '../protocols/index.js';
import { createBoundedServer } from '../server/http-boundary.js';
import { PAGE_HOOKS, type ServedSpec } from '../web/page-protocols.js';
import { stringFlag, type Command } from './args.js';
import { listenOn, parseLoopbackListen, stopSignal, WebViewError } from './serve.js';

const ROOT = new URL('../../', import.meta.url);
export const AGENT_BUNDLE = new URL('dist/web/agent.js', ROOT);
export const WASM = new URL('bindings/web/aigenora_wasm_bg.wasm', ROOT);
/** The protocol_id module, which the page loads beside the core (ts/web/page.ts). */
export const WASM_PYJSON = new URL('bindings/web/aigenora_wasm_pyjson_bg.wasm', ROOT);

// The page's own files, the WASM core and its session's WebSocket. No 'unsafe-eval': the page checks
// messages with the validators of its built-in specs compiled ahead of time (scripts/build-validators.mjs).
export const CSP =
  "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self' ws: wss:; style-src 'self' 'unsafe-inline'; img-src 'self' blob: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>aigenora agent</title>
<style>
  body { font: 16px/1.45 system-ui, sans-serif; margin: 1.5rem auto; max-width: 52rem; padding: 0 1rem; }
  h1 { font-size: 1.3rem; margin: 0 0 .3rem; }
  #status { font-weight: 600; }
  #outcome:not(:empty) { border: 2px solid; padding: .5rem .8rem; margin: 1rem 0; font-weight: 600; }
  #log { font: 13px/1.35 ui-monospace, monospace; max-height: 18rem; overflow: auto; border: 1px solid #8888; padding: .4rem 2.8rem; }
  button { font: inherit; padding: .35rem .8rem; }
  .board button { padding: .1rem; white-space: nowrap; }
  button:focus-visible, input:focus-visible, textarea:focus-visible, select:focus-visible { outline: 3px solid; outline-offset: 2px; }
  textarea { width: 100%; font: 13px ui-monospace, monospace; }
  section { margin: 1rem 0; }
  .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
</style>
<h1>aigenora agent</h1>
<p><span id="status" role="status" aria-live="polite">starting…</span> <span id="protocol"></span></p>
<p id="identity"></p>
<form id="join" hidden>
  <p><label for="invitation">Invitation (aigenora1.…)</label><br><textarea id="invitation" name="invitation" rows="4" required></textarea></p>
  <p><label for="mode">Who decides</label>
  <select id="mode" name="mode"><option value="human">I do (human)</option><option value="hybrid">the agent, unless I decide first (hybrid)</option><option value="autonomous">the agent (autonomous)</option></select>
  <button type="submit">Join</button></p>
</form>
<p id="said" class="visually-hidden" aria-live="polite" aria-atomic="true"></p>
<section id="decision" aria-label="your decision"></section>
<section id="board" aria-label="the game so far"></section>
<div id="outcome" role="status" aria-live="polite"></div>
<p><a id="download" hidden>Download the transcript</a></p>
<h2>Frames</h2>
<ol id="log" aria-label="frames sent and accepted"></ol>
<script type="module" src="./agent.js"></script>
</html>
`;

/** The built-in specs the page can play, as their exact bytes. */
export function servedSpecs(): ServedSpec[] {
  return BUILTINS.filter((b) => PAGE_HOOKS[b.folder]).map((b) => ({
    alias: b.alias,
    folder: b.folder,
    spec: readFileSync(join(builtinDir(b), 'spec.json'), 'utf8'),
  }));
}

export interface AgentServer {
  url: string;
  close(): Promise<void>;
}

export async function serveAgentPage(host: string, port: number): Promise<AgentServer> {
  if (!existsSync(AGENT_BUNDLE)) throw new WebViewError('WEB_BUNDLE_MISSING', `${AGENT_BUNDLE.pathname} is missing; build it with: npm run build`);
  const files: Record<string, [string, Buffer | string]> = {
    '/': ['text/html; charset=utf-8', PAGE],
    '/agent.js': ['text/javascript; charset=utf-8', readFileSync(AGENT_BUNDLE)],
    '/aigenora_wasm_bg.wasm': ['application/wasm', readFileSync(WASM)],
    '/aigenora_wasm_pyjson_bg.wasm': ['application/wasm', readFileSync(WASM_PYJSON)],
    '/protocols.json': ['application/json', JSON.stringify(servedSpecs())],
  };
  const server = createBoundedServer((req, res, { path }) => {
    const file = files[path];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, {
      'content-type': file[0],
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : file[1]);
  });
  const { origin, close } = await listenOn(server, host, port);
  return { url: `${origin}/`, close };
}

export const webCommand: Command = {
  name: 'web',
  usage: 'aigenora web [--listen 127.0.0.1:PORT] [--json]',
  help: `Serves the agent page on loopback: open http://127.0.0.1:PORT/#invitation=<aigenora1…>&mode=autonomous
to join a session hosted elsewhere (\`aigenora host\` listens on a WebSocket address the page dials) and play it
in the browser; mode=human asks the person for each move, mode=hybrid lets the agent play unless the person
decides first. The page keeps its key and finished sessions in the browser (IndexedDB), checks the session's
transcript and receipt itself, and shows the outcome in #outcome. Without an invitation in the URL it asks for
one. --listen must be a loopback address (default 127.0.0.1:0, a free port). Prints the URL (--json: {"url"}),
then serves until SIGINT or SIGTERM.`,
  flags: { listen: 'string', json: 'boolean' },
  async run(args, out) {
    const { host, port } = parseLoopbackListen(stringFlag(args.flags, 'listen') ?? '127.0.0.1:0');
    const s = await serveAgentPage(host, port);
    if (args.flags['json']) out.line(JSON.stringify({ url: s.url }));
    else out.line(`agent page at ${s.url}  (open ${s.url}#invitation=<aigenora1…>&mode=autonomous)`);
    await stopSignal();
    await s.close();
    return 0;
  },
};
