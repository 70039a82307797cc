// The canvas's tie to a graph saved on the server (/api/graphs): save, new versions, dirty state.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { ApiError, saveGraph, type SavedGraph } from '../../api/graphs';
import type { GraphSpec } from '../../api/types';
import { graphKey, loadLink, storeLink, type ServerLink } from './storage';

export function useServerGraph(graph: GraphSpec) {
  const [link, setLink] = useState<ServerLink | null>(loadLink);
  const [saving, setSaving] = useState(false);
  const latest = useRef(graph);
  useLayoutEffect(() => {
    latest.current = graph;
  }, [graph]);

  useEffect(() => storeLink(link), [link]);

  const dirty = link === null ? graph.nodes.length > 0 : link.savedKey !== graphKey(graph);

  /**
   * Save the canvas as it is now (or `graph`, the canvas about to be: Train saves its epochs
   * override with it); a graph deleted on the server is saved again as a new one. `asNew`: a new
   * graph ("Save as"), leaving the linked one as it is.
   */
  const save = useCallback(
    async (graph?: GraphSpec, asNew = false): Promise<ServerLink> => {
      const graphNow = graph ?? latest.current;
      setSaving(true);
      try {
        let result: SavedGraph;
        try {
          result = await saveGraph(asNew ? null : (link?.id ?? null), graphNow.name, graphNow);
        } catch (error) {
          if (!(link && error instanceof ApiError && error.status === 404)) throw error;
          result = await saveGraph(null, graphNow.name, graphNow);
        }
        const next = {
          id: result.id,
          name: result.name,
          version: result.current_version,
          savedKey: graphKey(graphNow),
        };
        setLink(next);
        return next;
      } finally {
        setSaving(false);
      }
    },
    [link],
  );

  /** The canvas now shows `saved`; `key` is the graph as the canvas writes it back. */
  const adopt = useCallback((saved: SavedGraph, key: string) => {
    setLink({ id: saved.id, name: saved.name, version: saved.current_version, savedKey: key });
  }, []);

  const detach = useCallback(() => setLink(null), []);

  return { link, dirty, saving, save, adopt, detach };
}

export type ServerGraph = ReturnType<typeof useServerGraph>;
