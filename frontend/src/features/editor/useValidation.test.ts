import { describe, expect, it } from 'vitest';
import type { GraphError } from '../../api/types';
import { groupErrors } from './useValidation';

const error = (node_id: string | null, code = 'x'): GraphError => ({
  code,
  message: code,
  node_id,
  field: null,
  details: {},
});

describe('groupErrors', () => {
  it('files errors under their node, and graph-wide or stale ones under ""', () => {
    const groups = groupErrors(
      [error('a', '1'), error('a', '2'), error(null, '3'), error('gone', '4')],
      new Set(['a', 'b']),
    );
    expect(groups.get('a')!.map((e) => e.code)).toEqual(['1', '2']);
    expect(groups.get('')!.map((e) => e.code)).toEqual(['3', '4']);
    expect(groups.has('b')).toBe(false);
  });
});
