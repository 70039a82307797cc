// Where an edge that runs backwards (its target left of its source, as when a long chain wraps
// into the next band of the layout) crosses over: a horizontal lane clear of every node, so it is
// drawn around the graph's nodes instead of a curve across them.

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** How far the path leaves a port before it turns. */
export const STUB = 18;
const MARGIN = 10;

/** The y of a free horizontal lane between the two ports, nearest their middle; null if none. */
export function laneBetween(
  source: { x: number; y: number },
  target: { x: number; y: number },
  boxes: Iterable<Box>,
): number | null {
  const left = target.x - STUB;
  const right = source.x + STUB;
  const low = Math.min(source.y, target.y);
  const high = Math.max(source.y, target.y);
  // The heights the lane may not take: every node it would pass through, with a margin.
  const blocked: [number, number][] = [];
  for (const box of boxes) {
    if (box.x + box.width < left - MARGIN || box.x > right + MARGIN) continue;
    blocked.push([box.y - MARGIN, box.y + box.height + MARGIN]);
  }
  blocked.sort((a, b) => a[0] - b[0]);
  const free: [number, number][] = [];
  let from = low;
  for (const [top, bottom] of blocked) {
    if (top > from) free.push([from, Math.min(top, high)]);
    from = Math.max(from, bottom);
    if (from >= high) break;
  }
  if (from < high) free.push([from, high]);
  const middle = (low + high) / 2;
  let best: number | null = null;
  for (const [top, bottom] of free) {
    if (bottom - top < 4) continue;
    const centre = (top + bottom) / 2;
    if (best === null || Math.abs(centre - middle) < Math.abs(best - middle)) best = centre;
  }
  return best;
}

/** An orthogonal path through `points` with rounded corners. */
export function roundedPath(points: readonly { x: number; y: number }[], radius = 8): string {
  let path = `M ${points[0]!.x} ${points[0]!.y}`;
  for (let i = 1; i < points.length - 1; i++) {
    const [a, b, c] = [points[i - 1]!, points[i]!, points[i + 1]!];
    const r = Math.min(radius, Math.hypot(b.x - a.x, b.y - a.y) / 2, Math.hypot(c.x - b.x, c.y - b.y) / 2);
    const from = { x: b.x + Math.sign(a.x - b.x) * r, y: b.y + Math.sign(a.y - b.y) * r };
    const to = { x: b.x + Math.sign(c.x - b.x) * r, y: b.y + Math.sign(c.y - b.y) * r };
    path += ` L ${from.x} ${from.y} Q ${b.x} ${b.y} ${to.x} ${to.y}`;
  }
  const last = points[points.length - 1]!;
  return `${path} L ${last.x} ${last.y}`;
}

/** The path of a backward edge through `lane`: out right, over, and into the target from the left. */
export function lanePath(source: { x: number; y: number }, target: { x: number; y: number }, lane: number): string {
  return roundedPath([
    source,
    { x: source.x + STUB, y: source.y },
    { x: source.x + STUB, y: lane },
    { x: target.x - STUB, y: lane },
    { x: target.x - STUB, y: target.y },
    target,
  ]);
}

/** An edge label's height (10.5 px text, its padding and border) and its gap to what it sits on. */
export const LABEL_HEIGHT = 18;
const LABEL_GAP = 6;
/** Closer than this, the ports' handles are under a label at the curve's middle. */
const SHORT_EDGE = 140;
/** Half a handle (11 px) and its white ring. */
const HANDLE_REACH = 7;

/**
 * The y of an edge label's bottom: just above the curve's middle (`middleY`), or, on a short edge
 * between close cards, above both ports, so the label no longer covers their handles.
 */
export function labelBottom(source: { x: number; y: number }, target: { x: number; y: number }, middleY: number) {
  const above = middleY - LABEL_GAP;
  if (Math.abs(target.x - source.x) >= SHORT_EDGE) return above;
  return Math.min(above, source.y - HANDLE_REACH, target.y - HANDLE_REACH);
}
