import { describe, expect, it } from 'vitest';
import { categorySummary, type ColumnPublic } from './columns';

const listed = Array.from({ length: 20 }, (_, i) => `c${String(i).padStart(2, '0')}`);

describe('categorySummary', () => {
  it('counts every value of the column, not only the 20 the server lists', () => {
    const column: ColumnPublic = {
      name: 'city',
      kind: 'category',
      missing: 0,
      categories: listed,
      category_count: 9000,
    };
    expect(categorySummary(column)).toEqual({ shown: listed.slice(0, 12), count: 9000, more: 8988 });
  });

  it('shows a short list whole', () => {
    const column: ColumnPublic = {
      name: 'size',
      kind: 'category',
      missing: 1,
      categories: ['L', 'M', 'S'],
      category_count: 3,
    };
    expect(categorySummary(column)).toEqual({ shown: ['L', 'M', 'S'], count: 3, more: 0 });
  });

  it('has no values for a number column', () => {
    const column: ColumnPublic = { name: 'x', kind: 'number', missing: 0, categories: [], category_count: 0 };
    expect(categorySummary(column)).toEqual({ shown: [], count: 0, more: 0 });
  });
});
