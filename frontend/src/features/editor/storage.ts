// The open graph's draft in localStorage (a reload never loses work), its tie to the saved graph on
// the server, and the changes other pages ask the editor to make.
import type { GraphSpec } from '../../api/types';
import { parseGraphJson } from './logic/convert';
import { asDatasetNode, type DatasetNodeSpec } from './logic/datasetNode';
import { asColumns, type TableColumn } from './logic/tableStarter';

const DRAFT_KEY = 'dragdl.editor.draft';

export function loadDraft(): GraphSpec | null {
  try {
    const text = localStorage.getItem(DRAFT_KEY);
    if (!text) return null;
    const parsed = parseGraphJson(text);
    return parsed.ok ? parsed.graph : null;
  } catch {
    return null;
  }
}

export function saveDraft(graph: GraphSpec): boolean {
  try {
    localStorage.setItem(DRAFT_KEY, JSON.stringify(graph));
    return true;
  } catch {
    return false;
  }
}

export function downloadJson(filename: string, data: unknown): void {
  const blob = new Blob([`${JSON.stringify(data, null, 2)}\n`], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function fileNameFor(name: string): string {
  const slug = name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9\u4e00-\u9fff]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${slug || 'graph'}.json`;
}

/** The saved graph on the server that the canvas is a copy of (null: not saved there yet). */
export interface ServerLink {
  id: string;
  name: string;
  version: number;
  /** The graph JSON as last saved or opened: anything else is an unsaved change. */
  savedKey: string;
}

const LINK_KEY = 'dragdl.editor.server';

export function loadLink(): ServerLink | null {
  try {
    const value = JSON.parse(localStorage.getItem(LINK_KEY) ?? 'null') as ServerLink | null;
    return value && typeof value.id === 'string' && typeof value.version === 'number' ? value : null;
  } catch {
    return null;
  }
}

export function storeLink(link: ServerLink | null): void {
  try {
    if (link) localStorage.setItem(LINK_KEY, JSON.stringify(link));
    else localStorage.removeItem(LINK_KEY);
  } catch {
    // the link is a convenience; the draft itself is stored separately
  }
}

/** The graph as it is compared with the saved one: anything else is an unsaved change. */
export const graphKey = (graph: GraphSpec): string => JSON.stringify(graph);

/** The graph open in the editor, as another page sees it: its name and whether it has unsaved work. */
export function openGraphState(): { name: string; nodes: number; unsaved: boolean } | null {
  const draft = loadDraft();
  if (!draft?.nodes.length) return null;
  const link = loadLink();
  return { name: draft.name, nodes: draft.nodes.length, unsaved: link?.savedKey !== graphKey(draft) };
}

/**
 * A change another page asks the editor to make when it opens next. The editor makes it through
 * its own update path, so the canvas is the only writer of the open graph and the change is one
 * undoable step there.
 */
export type EditRequest =
  | { kind: 'dataset'; dataset: { id: string; name: string; node?: DatasetNodeSpec; columns?: TableColumn[] } }
  | { kind: 'graph'; graph: GraphSpec; name: string };

const REQUEST_KEY = 'dragdl.editor.request';

export function requestEdit(request: EditRequest): boolean {
  try {
    sessionStorage.setItem(REQUEST_KEY, JSON.stringify(request));
    return true;
  } catch {
    return false;
  }
}

/** The change another page asked for, once. */
export function takeEditRequest(): EditRequest | null {
  try {
    const text = sessionStorage.getItem(REQUEST_KEY);
    sessionStorage.removeItem(REQUEST_KEY);
    if (!text) return null;
    const value = JSON.parse(text) as EditRequest;
    if (value.kind === 'dataset' && typeof value.dataset?.id === 'string') {
      const { id, name } = value.dataset;
      const node = asDatasetNode(value.dataset.node);
      const columns = asColumns(value.dataset.columns);
      return {
        kind: 'dataset',
        dataset: { id, name: String(name ?? ''), ...(node ? { node } : {}), ...(columns ? { columns } : {}) },
      };
    }
    if (value.kind === 'graph') {
      const parsed = parseGraphJson(JSON.stringify(value.graph));
      return parsed.ok ? { kind: 'graph', graph: parsed.graph, name: String(value.name ?? '') } : null;
    }
    return null;
  } catch {
    return null;
  }
}
