// The draft graph lives in localStorage until the server can store graphs (/api/graphs),
// so a reload never loses work.
import type { GraphSpec } from '../../api/types';
import { parseGraphJson } from './logic/convert';

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

const FOCUS_KEY = 'dragdl.editor.focus';

/** Ask the editor to select a node when it opens next (another page put it in the draft). */
export function requestFocus(nodeId: string): void {
  try {
    sessionStorage.setItem(FOCUS_KEY, nodeId);
  } catch {
    // only a convenience
  }
}

/** The node another page asked to select, once. */
export function takeFocusRequest(): string | null {
  try {
    const value = sessionStorage.getItem(FOCUS_KEY);
    sessionStorage.removeItem(FOCUS_KEY);
    return value;
  } catch {
    return null;
  }
}
