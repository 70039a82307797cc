// The editor's keyboard shortcuts (listed in dialogs/ShortcutsDialog.tsx). Delete and
// Shift-drag selection are React Flow's own (deleteKeyCode, selectionKeyCode).
import { useEffect, useLayoutEffect, useRef } from 'react';

export interface ShortcutActions {
  save: () => void;
  train: () => void;
  undo: () => void;
  redo: () => void;
  copy: () => void;
  paste: () => void;
  selectAll: () => void;
  help: () => void;
  layout: () => void;
  fit: () => void;
}

function isEditable(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/** `enabled` false (a dialog is open): only the dialog gets keys. */
export function useShortcuts(actions: ShortcutActions, enabled: boolean): void {
  const latest = useRef(actions);
  useLayoutEffect(() => {
    latest.current = actions;
  });

  useEffect(() => {
    if (!enabled) return;
    const onKey = (event: KeyboardEvent) => {
      const run = latest.current;
      const mod = event.ctrlKey || event.metaKey;
      const key = event.key.toLowerCase();
      if (mod && key === 's') {
        // Saving works from anywhere in the editor, a field included.
        event.preventDefault();
        run.save();
        return;
      }
      if (mod && event.key === 'Enter') {
        // Train from anywhere in the editor too: a field's value is already in the graph.
        event.preventDefault();
        run.train();
        return;
      }
      // Inside a field the browser's own undo, copy and paste apply.
      if (isEditable(event.target) || document.querySelector('dialog[open]')) return;
      if (mod && key === 'z') {
        event.preventDefault();
        if (event.shiftKey) run.redo();
        else run.undo();
      } else if (mod && key === 'y') {
        event.preventDefault();
        run.redo();
      } else if (mod && key === 'c') {
        run.copy();
      } else if (mod && key === 'v') {
        event.preventDefault();
        run.paste();
      } else if (mod && key === 'a') {
        event.preventDefault();
        run.selectAll();
      } else if (!mod && !event.altKey) {
        if (event.key === '?') run.help();
        else if (key === 'l') run.layout();
        else if (key === 'f') run.fit();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [enabled]);
}
