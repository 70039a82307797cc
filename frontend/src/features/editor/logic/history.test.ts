import { describe, expect, it } from 'vitest';
import { canRedo, canUndo, createHistory, record, redo, undo } from './history';

describe('history', () => {
  it('undoes and redoes steps in order', () => {
    let h = createHistory('a');
    h = record(h, 'b', { now: 1 });
    h = record(h, 'c', { now: 2 });
    expect(canUndo(h)).toBe(true);
    h = undo(h);
    expect(h.present).toBe('b');
    h = undo(h);
    expect(h.present).toBe('a');
    expect(canUndo(h)).toBe(false);
    expect(undo(h)).toBe(h);
    h = redo(redo(h));
    expect(h.present).toBe('c');
    expect(canRedo(h)).toBe(false);
    expect(redo(h)).toBe(h);
  });

  it('drops the redo branch on a new step', () => {
    let h = record(record(createHistory(1), 2), 3);
    h = record(undo(h), 4);
    expect(h.present).toBe(4);
    expect(canRedo(h)).toBe(false);
    expect(undo(h).present).toBe(2);
  });

  it('merges quick edits with the same key into one step', () => {
    let h = createHistory('');
    h = record(h, 'h', { coalesceKey: 'name', now: 1000 });
    h = record(h, 'he', { coalesceKey: 'name', now: 1300 });
    h = record(h, 'hey', { coalesceKey: 'name', now: 1600 });
    expect(h.past).toEqual(['']);
    expect(undo(h).present).toBe('');
  });

  it('keeps edits apart when the key changes or time passes', () => {
    let h = createHistory(0);
    h = record(h, 1, { coalesceKey: 'a', now: 0 });
    h = record(h, 2, { coalesceKey: 'b', now: 10 });
    h = record(h, 3, { coalesceKey: 'b', now: 5000 });
    expect(h.past).toEqual([0, 1, 2]);
  });

  it('never merges after an undo', () => {
    let h = record(createHistory(0), 1, { coalesceKey: 'a', now: 0 });
    h = record(undo(h), 2, { coalesceKey: 'a', now: 1 });
    expect(h.past).toEqual([0]);
  });

  it('keeps at most `limit` steps', () => {
    let h = createHistory(0);
    for (let i = 1; i <= 10; i++) h = record(h, i, { limit: 3 });
    expect(h.past).toEqual([7, 8, 9]);
  });
});
