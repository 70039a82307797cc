import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../../test/fixtures';
import { prettyShape, summarizeParams } from './summary';

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
  });
});
