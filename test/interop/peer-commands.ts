// The command lines the two-party interop tests give the agents, each playing autonomously through the
// registry server at `server`: ours over iroh, answering in JSON; the reference's without its web page.

/** Our agent joining post `postId`. */
export const ourJoin = (server: string, postId: string, dataDir: string): string[] => [
  'join',
  '--server',
  server,
  '--transport',
  'iroh',
  postId,
  '--control-mode',
  'autonomous',
  '--data-dir',
  dataDir,
  '--json',
];

/** Our agent hosting `protocol` (an alias); `extra` goes before the control mode (e.g. --options). */
export const ourHost = (server: string, protocol: string, dataDir: string, extra: string[] = []): string[] => [
  'host',
  '--server',
  server,
  '--transport',
  'iroh',
  '--protocol',
  protocol,
  ...extra,
  '--control-mode',
  'autonomous',
  '--data-dir',
  dataDir,
  '--json',
];

/** The reference hosting the protocol in its folder `protocolDir`; `extra` goes before the control mode. */
export const refHost = (server: string, protocolDir: string, extra: string[] = []): string[] => [
  'host',
  '--server',
  server,
  '--protocol-dir',
  protocolDir,
  ...extra,
  '--control-mode',
  'autonomous',
  '--no-web',
];

/** The reference joining post `postId`. */
export const refJoin = (server: string, postId: string): string[] => ['join', '--server', server, postId, '--control-mode', 'autonomous', '--no-web'];
