import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../../test/fixtures';
import type { DatasetSummary } from '../../../api/types';
import { prettyShape, summarizeParams, tableFacts } from './summary';

describe('summarizeParams', () => {
  const schema = CATALOG.byType.get('layer.Conv2d')!.params_schema;

  it('shows the params people look for first, by their titles', () => {
    expect(summarizeParams({ bias: false, padding: 'valid', kernel_size: 5, out_channels: 32 }, schema)).toEqual([
      { name: 'out_channels', label: 'Out Channels', value: '32' },
      { name: 'kernel_size', label: 'Kernel Size', value: '5' },
      { name: 'padding', label: 'Padding', value: 'valid' },
    ]);
  });

  it('skips unset and empty params and shortens long values', () => {
    const rows = summarizeParams({ out_channels: null, padding: 'x'.repeat(40), bias: true }, schema);
    expect(rows.map((r) => r.name)).toEqual(['padding', 'bias']);
    expect(rows[0]!.value).toHaveLength(22);
    expect(rows[1]!.value).toBe('✓');
  });
});

describe('prettyShape', () => {
  it('prints dimensions with a times sign', () => {
    expect(prettyShape('16x28x28')).toBe('16×28×28');
    expect(prettyShape('10')).toBe('10');
    expect(prettyShape('3x?x?')).toBe('3×?×?');
  });

  it('leaves words alone (each input type words its own shapes: inputs/registry.ts)', () => {
    expect(prettyShape('13 features')).toBe('13 features');
    expect(prettyShape('max 2x2')).toBe('max 2×2');
  });
});

describe('tableFacts', () => {
  const images: DatasetSummary = { classes: ['0', '1'], count: 100, channels: 1, size: '28x28' };

  it('is null for an image dataset (no columns), even with a null columns field', () => {
    expect(tableFacts(images)).toBeNull();
    expect(tableFacts({ ...images, columns: null, target: null })).toBeNull();
  });

  it('counts the columns by kind and those with missing values', () => {
    const table: DatasetSummary = {
      classes: [],
      count: 442,
      channels: 0,
      size: null,
      target: 'progression',
      columns: [
        { name: 'age', kind: 'number', missing: 0, categories: [] },
        { name: 'bmi', kind: 'number', missing: 3, categories: [] },
        { name: 'sex', kind: 'category', missing: 1, categories: ['f', 'm'] },
      ],
    };
    expect(tableFacts(table)).toEqual({
      rows: 442,
      columns: 3,
      numbers: 2,
      categories: 1,
      withMissing: 2,
      target: 'progression',
      classes: 0,
      missingTargets: 0,
      missingTargetRows: '',
    });
  });

  it('names the rows left out for want of a target, marking those the server did not list', () => {
    const table: DatasetSummary = {
      classes: ['Adelie', 'Gentoo'],
      count: 342,
      channels: 0,
      size: null,
      target: 'species',
      columns: [{ name: 'island', kind: 'category', missing: 0, categories: ['Biscoe'] }],
      missing_targets: 2,
      missing_target_rows: [4, 272],
    };
    expect(tableFacts(table)).toMatchObject({ rows: 342, missingTargets: 2, missingTargetRows: '4, 272' });
    const many = { ...table, missing_targets: 12, missing_target_rows: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] };
    expect(tableFacts(many)?.missingTargetRows).toBe('1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …');
  });

  it('counts the classes the server lists: none for a kind that answers no classes', () => {
    const table: DatasetSummary = {
      classes: ['25', '31', '52'],
      count: 3,
      channels: 0,
      size: null,
      target: 'progression',
      columns: [{ name: 'age', kind: 'number', missing: 0, categories: [] }],
    };
    expect(tableFacts(table)?.classes).toBe(3);
    expect(tableFacts({ ...table, classes: [] })?.classes).toBe(0);
  });
});
