/**
 * The deck ledger both sides keep in step, in id-B space: which card is in the stock, in which hand, or
 * played. It never holds a face. Hooks see it read-only as `_mp_deck_view`.
 */
import type { MentalPokerDeckView, Role } from '../hooks/types.js';

export class Ledger implements MentalPokerDeckView {
  readonly stock = new Set<string>();
  readonly played = new Set<string>();
  private readonly hands: Record<Role, Set<string>> = { host: new Set(), guest: new Set() };
  /** The id-Bs in index order: draws take the first one still in the stock. */
  private ids: string[] = [];

  reset(size: number): void {
    this.ids = Array.from({ length: size }, (_, i) => String(i));
    for (const id of this.ids) this.stock.add(id);
  }

  get size(): number {
    return this.ids.length;
  }

  hand_of(who: Role): Set<string> {
    return this.hands[who];
  }

  /** The card the next draw fetches, both sides computing the same one; undefined when the stock is out. */
  nextStock(): string | undefined {
    return this.ids.find((id) => this.stock.has(id));
  }

  /** stock → hand; false when the card is not in the stock. */
  dealTo(who: Role, id: string): boolean {
    if (!this.stock.delete(id)) return false;
    this.hands[who].add(id);
    return true;
  }

  /** hand → played; false unless the card is in `who`'s hand and not yet played (the nullifier). */
  play(who: Role, id: string): boolean {
    const hand = this.hands[who];
    if (!hand.has(id) || this.played.has(id)) return false;
    hand.delete(id);
    this.played.add(id);
    return true;
  }
}
