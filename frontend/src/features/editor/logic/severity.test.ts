import { describe, expect, it } from 'vitest';
import type { GraphError } from '../../../api/types';
import { blockingErrors, isWarning } from './severity';

const problem = (code: string, severity?: 'error' | 'warning'): GraphError => ({
  code,
  message: code,
  node_id: 'train',
  field: null,
  details: {},
  ...(severity ? { severity } : {}),
});

describe('severity', () => {
  it('keeps errors, with or without a severity, and leaves warnings out', () => {
    const errors = [problem('a'), problem('classes_look_like_values', 'warning'), problem('b', 'error')];
    expect(blockingErrors(errors).map((e) => e.code)).toEqual(['a', 'b']);
    expect(errors.map(isWarning)).toEqual([false, true, false]);
  });
});
