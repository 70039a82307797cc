// The node catalog: every node type with its ports and its params' JSON Schema.
import { api, call } from './client';
import type { CatalogEntry } from './types';

/** The node catalog with its titles, help and choice labels in `lang`. */
export async function fetchCatalog(lang: 'en' | 'zh'): Promise<CatalogEntry[]> {
  const data = await call(() => api.GET('/api/catalog', { params: { query: { lang } } }));
  return data as unknown as CatalogEntry[];
}
