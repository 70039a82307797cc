import { createContext, useContext, useSyncExternalStore } from 'react';
import type { GraphError } from '../../api/types';
import { EMPTY_CATALOG, type CatalogIndex } from '../catalog/catalogIndex';

/** What node and edge components read besides their own data: validation and the catalog. */
export interface EditorView {
  catalog: CatalogIndex;
  errorsByNode: ReadonlyMap<string, GraphError[]>;
  shapes: Readonly<Record<string, string>>;
}

/**
 * The view as a tiny external store rather than a context value: each node and edge subscribes
 * to its own slice (its errors, its source's shape), so a new validation answer re-renders only
 * the nodes and edges whose slice changed, not all of them (with 200 nodes that is the difference
 * between a few and ~400 components per answer). The context itself never changes.
 */
export interface EditorViewStore {
  get(): EditorView;
  set(view: EditorView): void;
  subscribe(listener: () => void): () => void;
}

export function createEditorViewStore(initial: EditorView): EditorViewStore {
  let view = initial;
  const listeners = new Set<() => void>();
  return {
    get: () => view,
    set(next) {
      if (next === view) return;
      view = next;
      for (const listener of listeners) listener();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export const EditorViewContext = createContext<EditorViewStore>(
  createEditorViewStore({ catalog: EMPTY_CATALOG, errorsByNode: new Map(), shapes: {} }),
);

/** A slice of the view; the component re-renders only when `select` returns something else. */
export function useEditorView<T>(select: (view: EditorView) => T): T {
  const store = useContext(EditorViewContext);
  const snapshot = () => select(store.get());
  return useSyncExternalStore(store.subscribe, snapshot, snapshot);
}
