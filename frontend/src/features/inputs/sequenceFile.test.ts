import { describe, expect, it } from 'vitest';
import { parseCsvSeries, parseNpy, parseTs } from './sequenceFile';
import { downsample, samplePoints } from './sequencePlots';

/** An .npy file of float32 values in C order, as numpy.save writes it (format 1.0). */
function npy(shape: number[], values: number[], descr = '<f4'): ArrayBuffer {
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const buffer = new ArrayBuffer(10 + header.length + values.length * 4);
  const bytes = new Uint8Array(buffer);
  bytes.set([0x93, ...'NUMPY'.split('').map((c) => c.charCodeAt(0)), 1, 0]);
  new DataView(buffer).setUint16(8, header.length, true);
  bytes.set(new TextEncoder().encode(header), 10);
  const view = new DataView(buffer);
  values.forEach((value, i) => view.setFloat32(10 + header.length + i * 4, value, true));
  return buffer;
}

describe('sequence files read in the browser for plotting', () => {
  it('reads a multivariate .ts file of unequal lengths, labels and missing values', () => {
    const text = [
      '@problemName Motions',
      '@univariate false',
      '@dimensions 2',
      '@classLabel true walk run',
      '@data',
      '1,2,3:4,5,6:walk',
      '7,?:8,9:run',
    ].join('\n');
    const series = parseTs(text)!;
    expect(series).toHaveLength(2);
    expect(series[0]).toEqual([
      [1, 4],
      [2, 5],
      [3, 6],
    ]);
    expect(series[1]![1]![0]).toBeNaN();
    expect(series[1]![1]![1]).toBe(9);
  });

  it('reads a univariate .ts file without labels, and refuses text that is not one', () => {
    expect(parseTs('@univariate true\n@data\n1,2,3\n4,5,6\n')).toEqual([
      [[1], [2], [3]],
      [[4], [5], [6]],
    ]);
    expect(parseTs('a,b\n1,2')).toBeNull();
  });

  it('keeps every dimension of a multivariate .ts file that declares no labels', () => {
    const text = ['@univariate false', '@classLabel false', '@data', '1,2:3,4', '5:6'].join('\n');
    expect(parseTs(text)).toEqual([
      [
        [1, 3],
        [2, 4],
      ],
      [[5, 6]],
    ]);
  });

  it('reads a CSV of one sequence, skipping its header', () => {
    expect(parseCsvSeries('x,y\n1,2\n3,4\n')).toEqual([
      [
        [1, 2],
        [3, 4],
      ],
    ]);
    expect(parseCsvSeries('')).toBeNull();
  });

  it('reads .npy arrays of (N, T, F) and (T,), and refuses a pickled one', () => {
    expect(parseNpy(npy([2, 2, 1], [1, 2, 3, 4]))).toEqual([
      [[1], [2]],
      [[3], [4]],
    ]);
    expect(parseNpy(npy([3], [1, 2, 3]))).toEqual([[[1], [2], [3]]]);
    expect(parseNpy(npy([1], [0], '|O'))).toBeNull();
    expect(parseNpy(npy([4, 2, 1], [1, 2]))).toBeNull(); // shorter than its header says
  });

  it('plots at most 200 points per feature, ends included', () => {
    const long = Array.from({ length: 1000 }, (_, i) => [i, -i]);
    const [first, second] = downsample(long);
    expect(first).toHaveLength(200);
    expect(first![0]).toEqual([0, 0]);
    expect(first![199]).toEqual([999, 999]);
    expect(second![199]).toEqual([999, -999]);
    expect(downsample([[5]])).toEqual([[[0, 5]]]);
    expect(samplePoints({ sample: 0, length: 9, target: null, steps: [0, 8], values: [[1, 2]] })).toEqual([
      [
        [0, 1],
        [8, 2],
      ],
    ]);
  });
});
