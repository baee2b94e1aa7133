/** `aigenora conformance [PATH...] [--backend wasm|js|both]` */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getCrypto, isBackendName, type Crypto } from '../crypto/index.js';
import { runConformance } from '../conformance/run.js';
import { UsageError, type Command } from './args.js';

export const DEFAULT_CORPUS = resolve(fileURLToPath(import.meta.url), '../../../../shared/conformance');

export const conformance: Command = {
  name: 'conformance',
  usage: 'aigenora conformance [PATH...] [--backend wasm|js|both] [--json]',
  help: `Walks each PATH (default: ../shared/conformance beside the project, when it exists), recognises
Wycheproof (eddsa_verify, ChaCha20/XChaCha20-Poly1305 aead_test, xdh_comp), ed25519-speccheck,
C2SP CCTV ed25519, sign.input, RFC 8032 and RFC 8439 JSON, RFC 8785 folders (input/, output/,
optional invalid/) and the ES6 number file by content, and checks every case against the policy in
../shared/conformance/README.md. With both backends, their outcomes must also agree.
Every file of the corpus is accounted for: its vector files must be present with the number of
cases its README gives, and a file that is neither documentation, nor listed as not vectors, nor in
a known format is an error. Totals count each case once, however many backends run it and however
many files hold it.
Exit status: 0 all passed, 1 a case failed or the backends disagreed, 2 a path is unreadable, a
file is in no known format, a corpus file is missing or not as its README says, or nothing was found.`,
  flags: { backend: 'string', json: 'boolean' },
  run(args, out) {
    const which = (args.flags['backend'] as string | undefined) ?? 'both';
    if (which !== 'both' && !isBackendName(which)) throw new UsageError(`--backend must be wasm, js or both, not ${JSON.stringify(which)}`);
    const backends: Crypto[] = which === 'both' ? [getCrypto('wasm'), getCrypto('js')] : [getCrypto(which)];
    let paths = args.positional;
    if (paths.length === 0) {
      if (!existsSync(DEFAULT_CORPUS)) throw new UsageError(`no PATH given and the default corpus ${DEFAULT_CORPUS} does not exist`);
      paths = [DEFAULT_CORPUS];
    }
    // A path that is not there is a usage mistake, refused before any report is printed.
    for (const p of paths) if (!existsSync(p)) throw new UsageError(`${p} does not exist`, 'FILE_NOT_FOUND');
    const report = runConformance(
      paths.map((p) => resolve(p)),
      backends,
    );
    if (args.flags['json']) {
      out.json(report);
    } else {
      for (const s of report.suites) {
        const run = s.total - s.repeated;
        const per = backends.map((b) => `${b.backend} ${s.passed[b.backend]}/${run}`).join('  ');
        const again = s.repeated ? `  (${s.repeated === s.total ? 'all' : s.repeated} repeat cases counted before)` : '';
        out.line(
          `${s.failed ? 'FAIL' : 'ok  '} ${s.path}  [${s.format}]  ${s.total} cases  ${per}${s.disagreements ? `  disagreements ${s.disagreements}` : ''}${again}`,
        );
        for (const f of s.failed ? s.failures : []) out.line(`       ${f}`);
      }
      for (const e of report.errors) out.line(`ERR  ${e}`);
      const docs = report.skipped.filter((k) => k.why === 'documentation').length;
      for (const k of report.skipped.filter((k) => k.why !== 'documentation')) out.line(`skip ${k.path}: ${k.why}`);
      if (docs) out.line(`skip ${docs} documentation files`);
      out.line(`${report.passed} passed, ${report.failed} failed`);
    }
    // A case that fails is the check's result (above); a corpus that cannot be checked as a whole is also a refusal.
    if (report.errors.length) {
      out.refuse('CORPUS_INVALID', `${report.errors.length} error(s), first: ${report.errors[0]!}`);
      return 2;
    }
    return report.failed > 0 ? 1 : 0;
  },
};
