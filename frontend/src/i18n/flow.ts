// React Flow's own texts (controls, minimap, keyboard help, edge names) in the UI's language.
import type { AriaLabelConfig, Edge } from '@xyflow/react';
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';

/** `ariaLabelConfig` for <ReactFlow>, one object per language (a new one would re-render the flow). */
export function useFlowAriaLabels(): Partial<AriaLabelConfig> {
  const { t, i18n } = useTranslation();
  return useMemo(
    () => ({
      'node.a11yDescription.default': t('flow.nodeHelp'),
      'node.a11yDescription.keyboardDisabled': t('flow.nodeHelpKeyboard'),
      'node.a11yDescription.ariaLiveMessage': ({ direction, x, y }: { direction: string; x: number; y: number }) =>
        t('flow.nodeMoved', { direction: t(`flow.direction.${direction}`, { defaultValue: direction }), x, y }),
      'edge.a11yDescription.default': t('flow.edgeHelp'),
      'controls.ariaLabel': t('flow.controls'),
      'controls.zoomIn.ariaLabel': t('flow.zoomIn'),
      'controls.zoomOut.ariaLabel': t('flow.zoomOut'),
      'controls.fitView.ariaLabel': t('flow.fitView'),
      'controls.interactive.ariaLabel': t('flow.interactive'),
      'minimap.ariaLabel': t('flow.minimap'),
      'handle.ariaLabel': t('flow.handle'),
    }),
    // eslint-disable-next-line react-hooks/exhaustive-deps -- t changes with the language
    [t, i18n.language],
  );
}

/**
 * Edges named in the UI's language ("Conv2d → ReLU") instead of React Flow's "Edge from conv to relu".
 * `titleOf` should change only when a title does (see `useTitleLookup`), so that dragging a node
 * does not give every edge a new object and re-render it.
 */
export function useNamedEdges<E extends Edge>(edges: E[], titleOf: (nodeId: string) => string | null): E[] {
  const { t } = useTranslation();
  return useMemo(
    () =>
      edges.map((edge) => ({
        ...edge,
        ariaLabel: t('flow.edge', {
          source: titleOf(edge.source) ?? edge.source,
          target: titleOf(edge.target) ?? edge.target,
        }),
      })),
    [edges, titleOf, t],
  );
}

/** A title lookup that stays the same object while every node keeps its title (not per drag frame). */
export function useTitleLookup<N extends { id: string }>(
  nodes: N[],
  title: (node: N) => string | null,
): (nodeId: string) => string | null {
  const key = JSON.stringify(nodes.map((node) => [node.id, title(node)]));
  return useMemo(() => {
    const titles = new Map(JSON.parse(key) as [string, string | null][]);
    return (nodeId: string) => titles.get(nodeId) ?? null;
  }, [key]);
}
