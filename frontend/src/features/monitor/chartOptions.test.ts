import { describe, expect, it } from 'vitest';
import { confusionOption, countPoints, lineChartOption, rowShares, type LineSpec } from './chartOptions';

const lines: LineSpec[] = [
  {
    name: 'train',
    data: [
      [0.5, 2],
      [1, 1.5],
    ],
    kind: 'steps',
    color: '#000',
  },
  { name: 'val', data: [[1, 1.2]], kind: 'epochs', color: '#111' },
  {
    name: 'other (val.)',
    data: [
      [1, 1.3],
      [2, 1.1],
    ],
    kind: 'compare',
    color: '#222',
  },
];

describe('lineChartOption', () => {
  it('draws one series per line, steps thin, compared tasks dashed', () => {
    const option = lineChartOption({ lines, xName: 'epoch', yName: 'loss', emptyText: 'waiting' });
    expect(option.series.map((s) => s.name)).toEqual(['train', 'val', 'other (val.)']);
    expect(option.series[0]!.lineStyle.width).toBe(1);
    expect(option.series[2]!.lineStyle).toMatchObject({ type: 'dashed' });
    expect(option.graphic).toBeUndefined();
    expect(countPoints(lines)).toBe(5);
  });

  it('says it is waiting while there is nothing to draw, and spans the planned epochs', () => {
    const option = lineChartOption({ lines: [], xName: 'epoch', yName: 'loss', emptyText: 'waiting', xMax: 5 });
    expect(option.graphic?.style.text).toBe('waiting');
    expect(option.xAxis.max({ max: 0.3 })).toBe(5);
    expect(option.xAxis.max({ max: 6.2 })).toBe(7);
  });

  it('puts a second series on a right axis', () => {
    const option = lineChartOption({
      lines: [{ ...lines[1]!, rightAxis: true }],
      xName: 'epoch',
      yName: 'samples/s',
      rightName: 's',
      emptyText: '',
      zeroBased: true,
    });
    expect(option.yAxis).toHaveLength(2);
    expect(option.yAxis[0]!.min).toBe(0);
    expect(option.series[0]!.yAxisIndex).toBe(1);
  });
});

describe('confusion matrix', () => {
  it('normalises rows to shares', () => {
    expect(
      rowShares([
        [3, 1],
        [0, 0],
      ]),
    ).toEqual([
      [0.75, 0.25],
      [0, 0],
    ]);
  });

  it('makes one heat-map cell per (predicted, actual) pair', () => {
    const option = confusionOption(
      [
        [5, 1],
        [2, 8],
      ],
      ['cat', 'dog'],
      { predicted: 'P', actual: 'A' },
      false,
    );
    expect(option.series[0]!.data).toEqual([
      [0, 0, 5],
      [1, 0, 1],
      [0, 1, 2],
      [1, 1, 8],
    ]);
    expect(option.visualMap.max).toBe(8);
    expect(option.yAxis.inverse).toBe(true);
  });
});
