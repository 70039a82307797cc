// Undo/redo as an immutable value. Rapid edits to the same thing (typing in one field)
// coalesce into one step when they share a key and come within a short window.

export interface History<T> {
  past: T[];
  present: T;
  future: T[];
  lastKey: string | null;
  lastAt: number;
}

export interface RecordOptions {
  coalesceKey?: string | null;
  now?: number;
  windowMs?: number;
  limit?: number;
}

export function createHistory<T>(present: T): History<T> {
  return { past: [], present, future: [], lastKey: null, lastAt: 0 };
}

export function record<T>(history: History<T>, next: T, options: RecordOptions = {}): History<T> {
  const { coalesceKey = null, now = Date.now(), windowMs = 1000, limit = 100 } = options;
  if (coalesceKey !== null && coalesceKey === history.lastKey && now - history.lastAt <= windowMs) {
    return { ...history, present: next, future: [], lastAt: now };
  }
  const past = [...history.past, history.present];
  return {
    past: past.length > limit ? past.slice(past.length - limit) : past,
    present: next,
    future: [],
    lastKey: coalesceKey,
    lastAt: now,
  };
}

export function undo<T>(history: History<T>): History<T> {
  const previous = history.past[history.past.length - 1];
  if (previous === undefined) return history;
  return {
    past: history.past.slice(0, -1),
    present: previous,
    future: [history.present, ...history.future],
    lastKey: null,
    lastAt: 0,
  };
}

export function redo<T>(history: History<T>): History<T> {
  const [next, ...future] = history.future;
  if (next === undefined) return history;
  return { past: [...history.past, history.present], present: next, future, lastKey: null, lastAt: 0 };
}

export const canUndo = (history: History<unknown>): boolean => history.past.length > 0;
export const canRedo = (history: History<unknown>): boolean => history.future.length > 0;
