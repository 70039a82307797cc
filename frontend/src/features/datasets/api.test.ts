import { describe, expect, it } from 'vitest';
import { checkSelection } from './api';

const files = (...names: string[]) => names.map((name) => ({ name }));

describe('checkSelection', () => {
  it('accepts one zip or several .npy files', () => {
    expect(checkSelection(files('pets.ZIP'))).toBe('ok');
    expect(checkSelection(files('cat.npy', 'dog.npy'))).toBe('ok');
  });

  it('accepts one table (CSV, TSV, Parquet or Excel), alone', () => {
    expect(checkSelection(files('diabetes.csv'))).toBe('ok');
    expect(checkSelection(files('wine.Parquet'))).toBe('ok');
    expect(checkSelection(files('penguins.XLSX'))).toBe('ok');
    expect(checkSelection(files('a.xlsx', 'b.csv'))).toBe('manyTables');
    expect(checkSelection(files('a.tsv', 'b.csv'))).toBe('manyTables');
    expect(checkSelection(files('a.csv', 'b.zip'))).toBe('mixed');
    expect(checkSelection(files('a.csv', 'cat.npy'))).toBe('mixed');
  });

  it('accepts a .ts file of sequences or its TRAIN/TEST pair, alone', () => {
    expect(checkSelection(files('Motions.ts'))).toBe('ok');
    expect(checkSelection(files('Motions_TRAIN.ts', 'Motions_TEST.TS'))).toBe('ok');
    expect(checkSelection(files('a.ts', 'b.ts', 'c.ts'))).toBe('manyTs');
    expect(checkSelection(files('a.ts', 'b.csv'))).toBe('mixed');
  });

  it('names what is wrong with other selections', () => {
    expect(checkSelection([])).toBe('empty');
    expect(checkSelection(files('a.zip', 'b.zip'))).toBe('manyZips');
    expect(checkSelection(files('a.zip', 'b.npy'))).toBe('mixed');
    expect(checkSelection(files('a.png'))).toBe('type');
    expect(checkSelection(files('cat.npy'))).toBe('oneNpy');
  });
});
