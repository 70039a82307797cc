import { describe, expect, it } from 'vitest';
import {
  axisFormatter,
  confusionOption,
  countPoints,
  labelWidth,
  lineChartOption,
  niceStep,
  rowShares,
  type LineSpec,
} from './chartOptions';

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

describe('axes and legend', () => {
  const compared = (count: number): LineSpec[] =>
    Array.from({ length: count }, (_, i) => ({
      name: `a long task name number ${i} (val.)`,
      data: [
        [1, 0.5 + i / 10],
        [2, 0.4 + i / 10],
      ],
      kind: 'compare',
      color: '#222',
    }));

  it('keeps axis names out of the legend band, however many runs are compared', () => {
    const option = lineChartOption({
      lines: compared(5),
      xName: 'epoch',
      yName: 'loss',
      rightName: 's',
      emptyText: '',
    });
    expect(option.legend.type).toBe('scroll');
    expect(option.grid.top).toBeGreaterThanOrEqual(option.legend.top + option.legend.height);
    for (const axis of option.yAxis) expect(axis.nameLocation).toBe('middle');
    expect(option.xAxis.nameLocation).toBe('middle');
  });

  it('formats every label of an axis alike, from its range', () => {
    const labels = (values: number[], ticks: number[], options = {}) => ticks.map(axisFormatter(values, options));
    expect(labels([0.1, 0.2], [0.1, 0.12, 0.14, 0.2])).toEqual(['0.10', '0.12', '0.14', '0.20']);
    expect(labels([0.15, 2.3], [0, 0.5, 1, 1.5, 2])).toEqual(['0.0', '0.5', '1.0', '1.5', '2.0']);
    expect(labels([12, 480], [0, 100, 200], { zeroBased: true })).toEqual(['0', '100', '200']);
    expect(labels([0.3], [0.2, 0.3, 0.4], { percent: true })).toEqual(['20%', '30%', '40%']);
    expect(labels([0.95, 0.99], [0.9, 1], { percent: true })).toEqual(['90%', '100%']);
    // Learning rates: exponent form on the whole axis, the zero included as plain 0.
    expect(labels([1e-4, 5e-4], [0, 2e-4, 5e-4])).toEqual(['0', '2e-4', '5e-4']);
    expect(labels([2e5, 9e5], [2e5, 5e5])).toEqual(['2e+5', '5e+5']);
    // One value: the axis spans half of it each side, as ECharts draws it.
    expect(labels([0.7], [0.4, 0.7, 1])).toEqual(['0.4', '0.7', '1.0']);
    expect(niceStep(0.023)).toBe(0.02);
    expect(niceStep(370)).toBe(300);
  });

  it('draws a curve of a single point (a one-epoch run) as a marker, not a speck', () => {
    const one: LineSpec[] = [
      { name: 'val', data: [[1, 0.8]], kind: 'epochs', color: '#111' },
      { name: 'steps', data: [[0.5, 0.9]], kind: 'steps', color: '#000' },
      { name: 'other', data: [[1, 0.7]], kind: 'compare', color: '#222' },
    ];
    const series = lineChartOption({ lines: one, xName: 'epoch', yName: 'acc', emptyText: '', xMax: 1 }).series;
    for (const item of series) {
      expect(item.showSymbol).toBe(true);
      expect(item.symbolSize).toBeGreaterThanOrEqual(6);
    }
    expect(series[0]!.symbolSize).toBeGreaterThanOrEqual(10);
    expect(series[2]!.symbolSize).toBeGreaterThanOrEqual(10);
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

describe('the confusion matrix margin', () => {
  it('leaves room for the longest class name beside the axis name, so neither is clipped', () => {
    // A fixed 70 px margin cut 'Chinstrap' and 'not_face' and ran them into the axis name.
    for (const classes of [
      ['Adelie', 'Chinstrap', 'Gentoo'],
      ['face', 'not_face'],
      ['巴布亚企鹅', '阿德利企鹅'],
    ]) {
      const option = confusionOption(
        [
          [1, 0],
          [0, 1],
        ],
        classes,
        { predicted: 'P', actual: 'Actual' },
        false,
      );
      const widest = Math.max(...classes.map((name) => labelWidth(name, 11)));
      expect(option.yAxis.nameGap).toBeGreaterThan(widest + 8);
      expect(option.grid.left).toBeGreaterThan(option.yAxis.nameGap + 8);
    }
  });

  it('measures Chinese characters wider than Latin letters', () => {
    expect(labelWidth('企鹅', 11)).toBeGreaterThan(labelWidth('ab', 11));
    expect(labelWidth('not_face', 11)).toBeGreaterThan(40);
  });
});
