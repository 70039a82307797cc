// A layered left-to-right layout: a node's column is its longest distance from a source,
// and nodes in a column are ordered by the mean row of their parents (one barycentre pass).
// A long network wraps like text: its columns continue in bands below one another, as many per
// band as make the whole about as wide as the view (`aspect`) - a CNN is mostly one long chain.

export interface LayoutOptions {
  columnWidth?: number;
  rowHeight?: number;
  origin?: { x: number; y: number };
  /** Width / height of the view the layout should fill; Infinity keeps a single band. */
  aspect?: number;
  /** Space between bands. */
  bandGap?: number;
}

/** Columns per band so that the layout's width / height comes close to `aspect`. */
export function columnsPerBand(
  columns: number,
  tallest: number,
  aspect: number,
  columnWidth: number,
  rowHeight: number,
  bandGap: number,
): number {
  if (!Number.isFinite(aspect) || columns <= 3) return Math.max(columns, 1);
  const bandHeight = tallest * rowHeight + bandGap;
  const ideal = Math.ceil(Math.sqrt((aspect * columns * bandHeight) / columnWidth));
  return Math.min(columns, Math.max(3, ideal));
}

export function layeredLayout(
  nodes: readonly { id: string }[],
  edges: readonly { source: string; target: string }[],
  {
    columnWidth = 250,
    rowHeight = 140,
    origin = { x: 0, y: 0 },
    aspect = Number.POSITIVE_INFINITY,
    bandGap = 60,
  }: LayoutOptions = {},
): Map<string, { x: number; y: number }> {
  const ids = nodes.map((node) => node.id);
  const known = new Set(ids);
  const parents = new Map<string, string[]>(ids.map((id) => [id, []]));
  const children = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const edge of edges) {
    if (!known.has(edge.source) || !known.has(edge.target) || edge.source === edge.target) continue;
    parents.get(edge.target)!.push(edge.source);
    children.get(edge.source)!.push(edge.target);
  }

  // Kahn's order; nodes left over sit on a cycle and go after everything they can follow.
  const depth = new Map<string, number>();
  const pending = new Map(ids.map((id) => [id, parents.get(id)!.length]));
  const queue = ids.filter((id) => pending.get(id) === 0);
  for (const id of queue) depth.set(id, 0);
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    for (const child of children.get(id)!) {
      depth.set(child, Math.max(depth.get(child) ?? 0, depth.get(id)! + 1));
      const left = pending.get(child)! - 1;
      pending.set(child, left);
      if (left === 0) queue.push(child);
    }
  }
  for (const id of ids) {
    if (!depth.has(id)) {
      const placed = parents.get(id)!.filter((p) => queue.includes(p));
      depth.set(id, placed.length ? Math.max(...placed.map((p) => depth.get(p)!)) + 1 : 0);
    }
  }

  const columns: string[][] = [];
  for (const id of ids) {
    const column = depth.get(id)!;
    (columns[column] ??= []).push(id);
  }
  const row = new Map<string, number>();
  columns.forEach((column, index) => {
    if (index > 0) {
      const key = (id: string) => {
        const rows = parents
          .get(id)!
          .map((p) => row.get(p))
          .filter((r): r is number => r !== undefined);
        return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : Number.POSITIVE_INFINITY;
      };
      // Stable: ties keep the order the nodes had.
      column.sort((a, b) => key(a) - key(b));
    }
    column.forEach((id, i) => row.set(id, i - (column.length - 1) / 2));
  });

  const perBand = columnsPerBand(
    columns.length,
    Math.max(1, ...columns.map((column) => column?.length ?? 0)),
    aspect,
    columnWidth,
    rowHeight,
    bandGap,
  );
  // Each band is as tall as its tallest column; a node's row is centred within its band.
  const bandTops: number[] = [];
  const bandRows: number[] = [];
  let top = 0;
  for (let first = 0; first < columns.length; first += perBand) {
    const rows = Math.max(1, ...columns.slice(first, first + perBand).map((column) => column?.length ?? 0));
    bandTops.push(top);
    bandRows.push(rows);
    top += rows * rowHeight + bandGap;
  }

  const positions = new Map<string, { x: number; y: number }>();
  for (const id of ids) {
    const column = depth.get(id)!;
    const band = Math.floor(column / perBand);
    positions.set(id, {
      x: origin.x + (column % perBand) * columnWidth,
      y: origin.y + bandTops[band]! + (row.get(id)! + (bandRows[band]! - 1) / 2) * rowHeight,
    });
  }
  return positions;
}
