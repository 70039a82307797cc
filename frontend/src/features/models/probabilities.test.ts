import { describe, expect, it } from 'vitest';
import { agrees, maxAbsDiff, pieSlices, ranking, softmax, topK } from './probabilities';

describe('probabilities', () => {
  it('softmax sums to one and survives large logits', () => {
    const p = softmax([1000, 1001, 1002]);
    expect(p.reduce((a, b) => a + b)).toBeCloseTo(1, 12);
    expect(p[2]).toBeCloseTo(0.66524096, 7);
    expect(softmax([0, 0])).toEqual([0.5, 0.5]);
  });

  it('ranks the top classes, ties in class order', () => {
    const ranked = topK([0.1, 0.4, 0.1, 0.4], ['a', 'b', 'c', 'd'], 3);
    expect(ranked.map((r) => r.label)).toEqual(['b', 'd', 'a']);
    expect(ranked[0]).toEqual({ index: 1, label: 'b', probability: 0.4 });
  });

  it('measures the largest difference between browser and server', () => {
    expect(maxAbsDiff([0.2, 0.8], [0.2004, 0.7996])).toBeCloseTo(4e-4, 12);
    expect(maxAbsDiff([1], [0.5, 0.5])).toBe(Infinity);
    expect(agrees(4e-4)).toBe(true);
    expect(agrees(2e-3)).toBe(false);
    expect(agrees(Number.NaN)).toBe(false);
  });

  it('makes pie slices with an "other" slice for the rest', () => {
    const slices = pieSlices([0.5, 0.3, 0.1, 0.06, 0.04], ['0', '1', '2', '3', '4'], 2, 'other');
    expect(slices.map((s) => s.name)).toEqual(['0', '1', 'other']);
    expect(slices[2]!.value).toBeCloseTo(0.2);
    expect(pieSlices([0.7, 0.3], ['x', 'y'], 5, 'other')).toHaveLength(2);
  });
});

describe('ranking', () => {
  it('heads a ranking of every class of a two-class model as such, not as a top 5', () => {
    expect(ranking(2)).toEqual({ count: 2, key: 'models.everyClass' });
    expect(ranking(5)).toEqual({ count: 5, key: 'models.everyClass' });
    expect(ranking(10)).toEqual({ count: 5, key: 'models.topK' });
  });
});
