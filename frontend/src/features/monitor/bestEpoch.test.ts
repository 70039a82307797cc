import { describe, expect, it } from 'vitest';
import { bestEpoch } from './bestEpoch';
import { INITIAL_STATE, type MonitorState } from './series';

const state = (points: Record<string, number>[]): MonitorState => ({
  ...INITIAL_STATE,
  epochPoints: points.map((values, i) => ({ epoch: i + 1, step: (i + 1) * 10, values })),
});

describe('the monitor header', () => {
  it("pairs the best epoch's score with that epoch's loss, not the last epoch's", () => {
    const run = state([
      { val_accuracy: 0.8, val_loss: 0.6 },
      { val_accuracy: 0.95, val_loss: 0.2 },
      { val_accuracy: 0.9, val_loss: 0.9 },
    ]);
    expect(bestEpoch(run, 'accuracy', true)).toEqual({ epoch: 2, value: 0.95, loss: 0.2 });
  });

  it('takes the lowest value of a metric where lower is better, and nothing before an epoch', () => {
    const run = state([{ val_mae: 3, val_loss: 9 }, { val_mae: 2 }, { val_mae: 2.5, val_loss: 4 }]);
    expect(bestEpoch(run, 'mae', false)).toEqual({ epoch: 2, value: 2, loss: null });
    expect(bestEpoch(INITIAL_STATE, 'accuracy', true)).toBeNull();
  });
});
