import { createContext, useContext } from 'react';
import type { GraphError } from '../../api/types';
import { EMPTY_CATALOG, type CatalogIndex } from '../catalog/catalogIndex';

/** What node and edge components read besides their own data: validation and the catalog. */
export interface EditorView {
  catalog: CatalogIndex;
  errorsByNode: ReadonlyMap<string, GraphError[]>;
  shapes: Readonly<Record<string, string>>;
}

export const EditorViewContext = createContext<EditorView>({
  catalog: EMPTY_CATALOG,
  errorsByNode: new Map(),
  shapes: {},
});

export function useEditorView(): EditorView {
  return useContext(EditorViewContext);
}
