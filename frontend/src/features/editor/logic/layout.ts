// A layered left-to-right layout: dagre (the layout library React Flow's examples use) assigns
// each node a column and orders each column to keep edges from crossing. A long network then
// wraps like text into bands below one another, as many columns per band as make the whole about
// as make it show largest in the view (`aspect`): a CNN is mostly one long chain, and a single
// row of it would only fit the view at an unreadable zoom. Edges that wrap run in the gap between bands (see
// edges/ShapeEdgeView.tsx), never across nodes.
import dagre from '@dagrejs/dagre';

export interface LayoutOptions {
  columnWidth?: number;
  /** Space between the nodes of one column. */
  rowGap?: number;
  origin?: { x: number; y: number };
  /** Width / height of the view the layout should fill; Infinity keeps a single band. */
  aspect?: number;
  /**
   * The view's height in pixels, when known: then the fewest bands that show at a comfortable
   * zoom win over more bands that would show larger still (four nodes stay in one row).
   */
  viewHeight?: number;
  /** Space between bands: the lane wrapped edges run in. */
  bandGap?: number;
}

/** The view a layout is made for: its width / height and, when known, its height in pixels. */
export type LayoutView = Pick<LayoutOptions, 'aspect' | 'viewHeight'>;

/** A zoom at which node text reads well; and the share of the view a fitted graph takes. */
const COMFORTABLE_ZOOM = 0.7;
const FIT_SHARE = 0.8;

/** A node's size before it is measured (the node card is 180 px wide). */
export const DEFAULT_NODE_SIZE = { width: 180, height: 110 };

interface LayoutNode {
  id: string;
  measured?: { width?: number; height?: number };
}

export function layeredLayout(
  nodes: readonly LayoutNode[],
  edges: readonly { source: string; target: string }[],
  {
    columnWidth = 230,
    rowGap = 30,
    origin = { x: 0, y: 0 },
    aspect = Number.POSITIVE_INFINITY,
    viewHeight,
    bandGap = 70,
  }: LayoutOptions = {},
): Map<string, { x: number; y: number }> {
  if (!nodes.length) return new Map();
  const size = new Map(
    nodes.map((node) => [
      node.id,
      {
        width: node.measured?.width ?? DEFAULT_NODE_SIZE.width,
        height: node.measured?.height ?? DEFAULT_NODE_SIZE.height,
      },
    ]),
  );
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: 'LR', nodesep: rowGap, ranksep: columnWidth - DEFAULT_NODE_SIZE.width });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of nodes) graph.setNode(node.id, { ...size.get(node.id)! });
  for (const edge of edges) {
    // Dangling edges and loops say nothing about where a node goes (dagre breaks cycles itself).
    if (edge.source === edge.target || !size.has(edge.source) || !size.has(edge.target)) continue;
    graph.setEdge(edge.source, edge.target);
  }
  dagre.layout(graph);

  // dagre puts the nodes of one column on one x (their centre): that x is the column.
  const centre = new Map(nodes.map((node) => [node.id, graph.node(node.id) as { x: number; y: number }]));
  const xs = [...new Set(nodes.map((node) => Math.round(centre.get(node.id)!.x)))].sort((a, b) => a - b);
  const column = new Map(nodes.map((node) => [node.id, xs.indexOf(Math.round(centre.get(node.id)!.x))]));
  const top = (id: string) => centre.get(id)!.y - size.get(id)!.height / 2;
  const bottom = (id: string) => centre.get(id)!.y + size.get(id)!.height / 2;

  // Wrap into bands; of the ways to wrap, the one that the view (of `aspect`) shows the largest.
  const wrap = (perBand: number) => {
    const placed = new Map<string, { x: number; y: number }>();
    let bandTop = origin.y;
    let bottomMost = origin.y;
    for (let band = 0; band * perBand < xs.length; band++) {
      // Each band keeps dagre's rows for its columns, moved up to start right below the band before.
      const members = nodes.filter((node) => Math.floor(column.get(node.id)! / perBand) === band);
      const first = Math.min(...members.map((node) => top(node.id)));
      const last = Math.max(...members.map((node) => bottom(node.id)));
      for (const node of members) {
        placed.set(node.id, {
          x: origin.x + (column.get(node.id)! % perBand) * columnWidth,
          y: Math.round(bandTop + top(node.id) - first),
        });
      }
      bottomMost = bandTop + last - first;
      bandTop = bottomMost + bandGap;
    }
    const width = Math.min(perBand, xs.length) * columnWidth - (columnWidth - DEFAULT_NODE_SIZE.width);
    // The zoom at which the view shows it all is proportional to this.
    const scale = Math.min(aspect / width, 1 / (bottomMost - origin.y));
    return { placed, scale };
  };
  if (!Number.isFinite(aspect)) return wrap(xs.length).placed;
  const wraps = [];
  for (let perBand = xs.length; perBand >= Math.min(3, xs.length); perBand--) wraps.push(wrap(perBand));
  const comfortable = viewHeight && wraps.find((w) => w.scale * viewHeight * FIT_SHARE >= COMFORTABLE_ZOOM);
  if (comfortable) return comfortable.placed;
  return wraps.reduce((best, w) => (w.scale > best.scale ? w : best)).placed;
}
