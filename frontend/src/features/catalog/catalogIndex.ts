// Lookups over the node catalog (GET /api/catalog): the palette, the node components,
// the connection rules and the forms all read it (ARCHITECTURE.md section 1).
import { CATEGORIES, type CatalogEntry, type Category, type PortSpec, type TaskKindEntry } from '../../api/types';

export interface CatalogIndex {
  entries: readonly CatalogEntry[];
  byType: ReadonlyMap<string, CatalogEntry>;
  /** The task kinds in the server's order (the first is what older records, naming none, are). */
  kinds: readonly TaskKindEntry[];
  kindByName: ReadonlyMap<string, TaskKindEntry>;
}

export function indexCatalog(entries: readonly CatalogEntry[], kinds: readonly TaskKindEntry[] = []): CatalogIndex {
  return {
    entries,
    byType: new Map(entries.map((entry) => [entry.type, entry])),
    kinds,
    kindByName: new Map(kinds.map((kind) => [kind.name, kind])),
  };
}

export const EMPTY_CATALOG: CatalogIndex = indexCatalog([]);

/** The port an edge handle names; no handle means the node's first port on that side. */
export function findPort(ports: readonly PortSpec[], handle: string | null | undefined): PortSpec | undefined {
  return handle ? ports.find((port) => port.name === handle) : ports[0];
}

/** The type a port produces: an output's first type, as the server reads it. */
export function producedType(port: PortSpec): string {
  return port.types[0] ?? '';
}

export interface CatalogGroup {
  category: Category;
  entries: CatalogEntry[];
}

/** Entries grouped in category order; a query matches title, type or description (any case). */
export function groupCatalog(entries: readonly CatalogEntry[], query = ''): CatalogGroup[] {
  const needle = query.trim().toLowerCase();
  const matches = (entry: CatalogEntry) =>
    !needle ||
    entry.title.toLowerCase().includes(needle) ||
    entry.type.toLowerCase().includes(needle) ||
    entry.description.toLowerCase().includes(needle);
  return CATEGORIES.map((category) => ({
    category,
    entries: entries.filter((entry) => entry.category === category && matches(entry)),
  })).filter((group) => group.entries.length > 0);
}
