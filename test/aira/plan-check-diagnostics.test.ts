// The diagnostic builder and the runtime's code table: what leaves diagnostics.ts is schema-valid.
import { describe, expect, it } from 'vitest';
import { diagnostic, isBlockingDiagnostic, RUNTIME_CODES, runtimeDiagnostic, type RuntimeCode } from '../../ts/aira/diagnostics.js';
import { Diagnostic, EnvelopeStatus } from '../../ts/aira/schema.js';

describe('diagnostic()', () => {
  it('fills the defaults of the plan', () => {
    expect(diagnostic('PARAMETER_UNKNOWN', 'lower', 'input', 'no parameter "depth"')).toEqual({
      code: 'PARAMETER_UNKNOWN',
      phase: 'lower',
      cause: 'input',
      severity: 'error',
      affected: [],
      repairCapabilities: [],
      repairScope: [],
      approvalRequired: false,
      message: 'no parameter "depth"',
    });
  });

  it('takes refinements but never lets them change code, phase, cause or message', () => {
    const d = diagnostic('X', 'plan', 'input', 'm', {
      severity: 'warning',
      affected: ['s1'],
      expected: { min: 2 },
      actual: 1,
      repairCapabilities: ['cap:doc.setParameter@1'],
      code: 'Y',
      phase: 'commit',
      cause: 'stale',
      message: 'other',
    });
    expect(d).toMatchObject({ code: 'X', phase: 'plan', cause: 'input', message: 'm', severity: 'warning', affected: ['s1'], expected: { min: 2 }, actual: 1 });
    expect('expected' in diagnostic('X', 'plan', 'input', 'm', { expected: undefined })).toBe(false);
  });

  it('cuts an over-long message to the schema bound', () => {
    const d = diagnostic('X', 'plan', 'input', 'a'.repeat(5000));
    expect(d.message.length).toBe(1000);
    expect(Diagnostic.safeParse(d).success).toBe(true);
  });

  it('throws on a code that is not UPPER_SNAKE and on refinements the schema refuses', () => {
    for (const c of ['', 'lower', 'A-B', '1A']) expect(() => diagnostic(c, 'plan', 'input', 'm')).toThrow(TypeError);
    expect(() => diagnostic('X', 'plan', 'input', 'm', { repairCapabilities: ['not a cap'] })).toThrow();
  });
});

describe('RUNTIME_CODES', () => {
  it('holds the codes of the runtime semantics and each builds a schema-valid diagnostic', () => {
    for (const c of [
      'DISCOVERY_REQUIRED',
      'CANDIDATE_REQUIRED',
      'PREVIEW_REQUIRED',
      'VALIDATION_REQUIRED',
      'NOTHING_TO_REVERT',
      'INVALID_INPUT',
      'UNKNOWN_OPERATION',
      'DUPLICATE_REQUEST_ID',
      'TASK_TERMINAL',
      'STALE_REVISION',
      'READBACK_REQUIRED',
      'BOUND_CAPABILITY_STALE',
      'DEFERRED',
      'REPAIR_CAP_REACHED',
      'BUDGET_EXHAUSTED',
      'AUTHORITY_INTEGRITY',
      'COMPLETED',
      'ACCEPTANCE_FAILED',
    ]) {
      expect(Object.keys(RUNTIME_CODES)).toContain(c);
    }
    for (const [code, info] of Object.entries(RUNTIME_CODES) as Array<[RuntimeCode, (typeof RUNTIME_CODES)[RuntimeCode]]>) {
      const d = runtimeDiagnostic(code, 'x');
      expect(Diagnostic.parse(d)).toMatchObject({ code, phase: info.phase, cause: info.cause, severity: info.severity });
      if ('status' in info) expect(EnvelopeStatus.safeParse(info.status).success).toBe(true);
    }
  });

  it('matrix rejections are blocked admission/protocol errors; STALE_REVISION answers stale; DEFERRED is no error', () => {
    expect(RUNTIME_CODES.DISCOVERY_REQUIRED).toMatchObject({ status: 'blocked', phase: 'admission', cause: 'protocol', severity: 'error' });
    expect(RUNTIME_CODES.STALE_REVISION.status).toBe('stale');
    expect(RUNTIME_CODES.DEFERRED.severity).toBe('info');
    expect(isBlockingDiagnostic(runtimeDiagnostic('DEFERRED', 'later'))).toBe(false);
  });
});

describe('isBlockingDiagnostic (M41)', () => {
  it('only a schema-valid diagnostic of severity error opens repair', () => {
    const d = diagnostic('ASSERTION_FAILED', 'preview', 'assertion', 'min-wall');
    expect(isBlockingDiagnostic(d)).toBe(true);
    expect(isBlockingDiagnostic({ ...d, severity: 'warning' })).toBe(false);
    expect(isBlockingDiagnostic({ ...d, extra: 1 })).toBe(false);
    expect(isBlockingDiagnostic({ code: 'ASSERTION_FAILED', severity: 'error', message: 'looks like one' })).toBe(false);
    expect(isBlockingDiagnostic('the model says it failed')).toBe(false);
    expect(isBlockingDiagnostic(null)).toBe(false);
  });
});
