// The header's figures of one epoch: the best epoch's validation score and that same epoch's
// validation loss. The header showed the best accuracy beside the last epoch's loss, two epochs
// apart once training had gone past its best.
import type { MonitorState } from './series';

export interface BestEpoch {
  epoch: number;
  /** The headline metric's validation value at that epoch. */
  value: number;
  /** That epoch's validation loss, null when it reported none. */
  loss: number | null;
}

/** The epoch with the best `val_<key>` (the first of equal ones), or null before any. */
export function bestEpoch(state: MonitorState, key: string, higherIsBetter: boolean): BestEpoch | null {
  let best: BestEpoch | null = null;
  for (const point of state.epochPoints) {
    const value = point.values[`val_${key}`];
    if (value === undefined || !Number.isFinite(value)) continue;
    if (best === null || (higherIsBetter ? value > best.value : value < best.value)) {
      best = { epoch: point.epoch, value, loss: point.values.val_loss ?? null };
    }
  }
  return best;
}
