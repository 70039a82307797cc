// Where a node added without a pointer position (from the keyboard) goes: the free spot
// nearest the wanted one, so it never lands on top of another node.

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

const overlaps = (a: Rect, b: Rect, margin: number) =>
  a.x < b.x + b.width + margin &&
  b.x < a.x + a.width + margin &&
  a.y < b.y + b.height + margin &&
  b.y < a.y + a.height + margin;

/** Top-left corner for a `size` box near `wanted` (a top-left too), clear of `taken` by `margin`. */
export function findFreeSpot(
  wanted: { x: number; y: number },
  size: { width: number; height: number },
  taken: readonly Rect[],
  { step = 20, margin = 16, maxRings = 40 } = {},
): { x: number; y: number } {
  const free = (x: number, y: number) => !taken.some((rect) => overlaps({ x, y, ...size }, rect, margin));
  if (free(wanted.x, wanted.y)) return wanted;
  for (let ring = 1; ring <= maxRings; ring++) {
    // The ring's spots, nearest first: a spot is tried once whatever its distance ties.
    const spots: { x: number; y: number; d: number }[] = [];
    for (let i = -ring; i <= ring; i++) {
      for (const [dx, dy] of [
        [i, -ring],
        [i, ring],
        [-ring, i],
        [ring, i],
      ] as const) {
        spots.push({ x: wanted.x + dx * step, y: wanted.y + dy * step, d: dx * dx + dy * dy });
      }
    }
    spots.sort((a, b) => a.d - b.d);
    const spot = spots.find(({ x, y }) => free(x, y));
    if (spot) return { x: spot.x, y: spot.y };
  }
  return wanted;
}
