import { describe, expect, it } from 'vitest';
import { CATALOG, ENTRIES } from '../../test/fixtures';
import { findPort, groupCatalog } from './catalogIndex';

describe('groupCatalog', () => {
  it('groups entries in palette order: datasets, operators, layers, models, training', () => {
    expect(groupCatalog(ENTRIES).map((g) => g.category)).toEqual(['dataset', 'op', 'layer', 'train']);
  });

  it('searches titles, types and descriptions, ignoring case', () => {
    expect(groupCatalog(ENTRIES, 'CONV').flatMap((g) => g.entries.map((e) => e.type))).toEqual(['layer.Conv2d']);
    expect(groupCatalog(ENTRIES, 'flip at').flatMap((g) => g.entries.map((e) => e.type))).toEqual([
      'op.RandomHorizontalFlip',
    ]);
    expect(groupCatalog(ENTRIES, 'op.').map((g) => g.category)).toEqual(['op']);
    expect(groupCatalog(ENTRIES, 'zzz')).toEqual([]);
  });
});

describe('findPort', () => {
  it('finds a port by name, or the first one when the handle is omitted', () => {
    const conv = CATALOG.byType.get('layer.Conv2d')!;
    expect(findPort(conv.inputs, null)?.name).toBe('in');
    expect(findPort(conv.inputs, 'in')?.name).toBe('in');
    expect(findPort(conv.inputs, 'nope')).toBeUndefined();
  });
});
