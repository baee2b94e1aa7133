/**
 * What a local decision is, with no file access: the control modes, the decision configuration the
 * hooks see, a decision window and a decision record (decision.ts has the file-backed bus).
 */
import type { ControlMode, DecisionConfig } from '../hooks/types.js';
import type { Spec } from '../spec/types.js';

export const CONTROL_MODES: ControlMode[] = ['autonomous', 'hybrid', 'human'];

/** The decision configuration the hooks are given for a control mode (NOTES A13). */
export function decisionConfig(spec: Spec, mode: ControlMode): DecisionConfig | null {
  if (mode === 'autonomous') return null;
  const timeout = spec.decision?.timeout_seconds ?? 120;
  if (mode === 'human') return { mode: 'manual', control_mode: 'human', timeout_seconds: timeout, timeout_action: 'abort', require_explicit: true };
  return { mode: 'auto', control_mode: 'hybrid', timeout_seconds: timeout, timeout_action: spec.decision?.timeout_action ?? 'fallback' };
}

export interface DecisionRecord {
  match_key: string;
  match_value: unknown;
  value?: unknown;
  message?: Record<string, unknown>;
  _meta?: { decision_id?: string; origin?: string };
}

export interface Window {
  window_id: string;
  match_key: string;
  match_value: number;
  expects: 'value' | 'message';
  opened_at: string;
  release_at: string;
  deadline_at: string | null;
}
