/** Shapes shared by the mental-poker transcript, the audit and the engine mode. */

export type Role = 'host' | 'guest';

/**
 * A Receiver's post-game witness of one OT, as parsed from its `mp_witness` string
 * `{"ot_id", "label", "r": "<hex>"}`. There is no z: the audit takes z from the transcript, never from
 * the witness.
 */
export interface Witness {
  readonly otId: string;
  readonly label: string;
  readonly r: bigint;
}

/**
 * One entry of an `mp_opening`, as parsed from its JSON string: `{"kind": "token", "label", "token": hex}`,
 * `{"kind": "k_inner" | "k_outer", "label", "k": hex}`. Other kinds are ignored by the audit, as in the
 * reference; hex is checked when the audit reads it.
 */
export interface OpeningEntry {
  readonly kind: string;
  readonly label: string;
  readonly token?: string;
  readonly k?: string;
}
