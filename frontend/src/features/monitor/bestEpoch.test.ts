import { describe, expect, it } from 'vitest';
import type { CatalogEntry, GraphSpec } from '../../api/types';
import { TASK_KINDS } from '../../test/fixtures';
import { indexCatalog } from '../catalog/catalogIndex';
import { bestEpoch, watchedMetric } from './bestEpoch';
import { INITIAL_STATE, type MonitorState } from './series';

const state = (points: Record<string, number>[]): MonitorState => ({
  ...INITIAL_STATE,
  epochPoints: points.map((values, i) => ({ epoch: i + 1, step: (i + 1) * 10, values })),
});
const entry = (type: string, task: string): CatalogEntry => ({
  type,
  category: 'train',
  title: type,
  description: '',
  inputs: [],
  outputs: [],
  random: false,
  params_schema: {},
  task,
});
const catalog = indexCatalog(
  [entry('train.Classifier', 'classification'), entry('train.Regressor', 'regression')],
  TASK_KINDS,
);
const graph = (type: string, monitor?: string): Pick<GraphSpec, 'nodes'> => ({
  nodes: [{ id: 'train', type, params: monitor ? { monitor } : {} }],
});

describe('the monitor header', () => {
  it("takes the watched loss's best epoch when accuracy stays flat while the loss falls", () => {
    // The review's run: accuracy equal every epoch, val_loss falling to its best at the last one;
    // report.json said best_epoch 10, the header said epoch 1.
    const losses = [1.241, 1.23, 1.22, 1.21, 1.2, 1.19, 1.18, 1.17, 1.16, 1.1496];
    const run = state(losses.map((val_loss) => ({ val_accuracy: 0.44, val_loss })));
    const watched = watchedMetric(graph('train.Classifier'), catalog, 'classification');
    expect(watched).toEqual({ metric: 'val_loss', higherIsBetter: false });
    expect(bestEpoch(run, watched)).toEqual({ epoch: 10, value: 1.1496, loss: 1.1496 });
  });

  it("follows the train node's monitor in its kind's direction, the first of equal ones", () => {
    const run = state([
      { val_accuracy: 0.8, val_loss: 0.6 },
      { val_accuracy: 0.95, val_loss: 0.2 },
      { val_accuracy: 0.95, val_loss: 0.1 },
      { val_accuracy: 0.9, val_loss: 0.9 },
    ]);
    const watched = watchedMetric(graph('train.Classifier', 'val_accuracy'), catalog, 'classification');
    expect(watched).toEqual({ metric: 'val_accuracy', higherIsBetter: true });
    expect(bestEpoch(run, watched)).toEqual({ epoch: 2, value: 0.95, loss: 0.2 });
  });

  it('takes the lowest MAE and the highest R² of a regressor, and nothing before an epoch', () => {
    const run = state([
      { val_mae: 3, val_r2: 0.5, val_loss: 9 },
      { val_mae: 2, val_r2: 0.4 },
      { val_mae: 2.5, val_r2: 0.7 },
    ]);
    const mae = watchedMetric(graph('train.Regressor', 'val_mae'), catalog, 'regression');
    expect(bestEpoch(run, mae)).toEqual({ epoch: 2, value: 2, loss: null });
    const r2 = watchedMetric(graph('train.Regressor', 'val_r2'), catalog, 'regression');
    expect(bestEpoch(run, r2)?.epoch).toBe(3);
    expect(bestEpoch(INITIAL_STATE, mae)).toBeNull();
  });

  it('watches val_loss when the graph is not known', () => {
    expect(watchedMetric(null, catalog, null)).toEqual({ metric: 'val_loss', higherIsBetter: false });
  });
});
