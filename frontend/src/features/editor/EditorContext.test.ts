import { describe, expect, it } from 'vitest';
import { EMPTY_CATALOG } from '../catalog/catalogIndex';
import { createEditorViewStore, type EditorView } from './EditorContext';

const view = (shapes: Record<string, string>): EditorView => ({
  catalog: EMPTY_CATALOG,
  errorsByNode: new Map(),
  shapes,
});

describe('createEditorViewStore', () => {
  it('tells its subscribers about a new view, not about the same one again', () => {
    const first = view({ a: '16x8x8' });
    const store = createEditorViewStore(first);
    let calls = 0;
    const unsubscribe = store.subscribe(() => calls++);
    store.set(first);
    expect(calls).toBe(0);
    const second = view({ a: '17x8x8' });
    store.set(second);
    expect(calls).toBe(1);
    expect(store.get()).toBe(second);
    unsubscribe();
    store.set(view({}));
    expect(calls).toBe(1);
  });
});
