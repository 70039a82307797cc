// The catalog: every node type with its ports and its params' JSON Schema, and every task kind
// with its metrics, headline metric and answer schema.
import { api, call } from './client';
import type { CatalogEntry, TaskKindEntry } from './types';

export interface CatalogPayload {
  nodes: CatalogEntry[];
  task_kinds: TaskKindEntry[];
}

/** The catalog with its titles, help, choice and metric labels in `lang`. */
export async function fetchCatalog(lang: 'en' | 'zh'): Promise<CatalogPayload> {
  const data = await call(() => api.GET('/api/catalog', { params: { query: { lang } } }));
  return data as unknown as CatalogPayload;
}
