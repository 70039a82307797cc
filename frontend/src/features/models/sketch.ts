// A drawing on the sketch pad -> an image the size of the model's input, made like the digits of
// the training sets: the strokes cropped to their bounding box plus a margin, centred in a box of
// the target's aspect ratio, shrunk by area averaging, and inverted when the model learned dark
// strokes on a light background. Pure: gray values in, gray values out.

export interface SketchOptions {
  /** Output size in pixels. */
  width: number;
  height: number;
  /** Space around the strokes, as a share of the strokes' larger side (each side). */
  margin?: number;
  /** Ink darker than this (0..255) counts as empty paper when finding the bounding box. */
  threshold?: number;
  /** Dark strokes on white paper instead of white strokes on black. */
  invert?: boolean;
}

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** The smallest box holding every pixel above `threshold`, or null for an empty pad. */
export function inkBounds(ink: ArrayLike<number>, width: number, height: number, threshold = 16): Box | null {
  let left = width;
  let right = -1;
  let top = height;
  let bottom = -1;
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      if (ink[y * width + x]! > threshold) {
        if (x < left) left = x;
        if (x > right) right = x;
        if (y < top) top = y;
        if (y > bottom) bottom = y;
      }
    }
  }
  if (right < 0) return null;
  return { left, top, width: right - left + 1, height: bottom - top + 1 };
}

/** The crop: the strokes' box grown to the output's aspect ratio plus the margin, same centre. */
export function cropBox(bounds: Box, aspect: number, margin: number): Box {
  let height = Math.max(bounds.height, bounds.width / aspect);
  let width = height * aspect;
  const grow = 1 + 2 * margin;
  width *= grow;
  height *= grow;
  const cx = bounds.left + bounds.width / 2;
  const cy = bounds.top + bounds.height / 2;
  return { left: cx - width / 2, top: cy - height / 2, width, height };
}

/** Weights of source pixels [start, start+len) covering [from, to): the overlap of each pixel. */
function spans(from: number, size: number, outSize: number) {
  const step = size / outSize;
  return Array.from({ length: outSize }, (_, i) => {
    const lo = from + i * step;
    const hi = lo + step;
    const first = Math.floor(lo);
    const weights: number[] = [];
    for (let p = first; p < hi; p += 1) weights.push((Math.min(hi, p + 1) - Math.max(lo, p)) / step);
    return { first, weights };
  });
}

/** Area-average the region `box` of a gray image into outW x outH; outside the image counts as 0. */
export function areaResample(
  gray: ArrayLike<number>,
  width: number,
  height: number,
  box: Box,
  outW: number,
  outH: number,
): Float64Array {
  const columns = spans(box.left, box.width, outW);
  const rows = spans(box.top, box.height, outH);
  const pixel = (x: number, y: number) => (x < 0 || y < 0 || x >= width || y >= height ? 0 : gray[y * width + x]!);
  const out = new Float64Array(outW * outH);
  rows.forEach((row, oy) => {
    columns.forEach((column, ox) => {
      let sum = 0;
      row.weights.forEach((wy, j) => {
        if (wy === 0) return;
        column.weights.forEach((wx, i) => {
          if (wx !== 0) sum += wx * wy * pixel(column.first + i, row.first + j);
        });
      });
      out[oy * outW + ox] = sum;
    });
  });
  return out;
}

/**
 * The pad's ink (0 = paper, 255 = full stroke, row-major) as an image of width x height, values
 * 0..255; null when nothing is drawn.
 */
export function sketchToImage(
  ink: ArrayLike<number>,
  padWidth: number,
  padHeight: number,
  options: SketchOptions,
): Uint8ClampedArray<ArrayBuffer> | null {
  const { width, height, margin = 0.15, threshold = 16, invert = false } = options;
  const bounds = inkBounds(ink, padWidth, padHeight, threshold);
  if (!bounds) return null;
  const box = cropBox(bounds, width / height, margin);
  const values = areaResample(ink, padWidth, padHeight, box, width, height);
  const out = new Uint8ClampedArray(width * height);
  values.forEach((value, i) => {
    const v = Math.round(value);
    out[i] = invert ? 255 - v : v;
  });
  return out;
}

/** Gray values -> opaque RGBA bytes (for a canvas or a PNG). */
export function grayToRgba(gray: ArrayLike<number>): Uint8ClampedArray<ArrayBuffer> {
  const rgba = new Uint8ClampedArray(gray.length * 4);
  for (let i = 0; i < gray.length; i += 1) {
    const v = gray[i]!;
    rgba[i * 4] = v;
    rgba[i * 4 + 1] = v;
    rgba[i * 4 + 2] = v;
    rgba[i * 4 + 3] = 255;
  }
  return rgba;
}

/** Which way the model's images go: the normalisation mean tells a light background from a dark one. */
export function strokesAreDark(mean: readonly number[] | null | undefined): boolean {
  if (!mean || mean.length === 0) return false;
  return mean.reduce((a, b) => a + b, 0) / mean.length > 0.5;
}

/** The largest side of a sketch-like input: digits and Quick, Draw! sketches are 28 px. */
const SKETCH_SIDE = 64;

/**
 * Whether a model takes drawings: trained on small single-channel images (digits, sketches). A
 * photo model (three channels, or a large grey picture) answers a drawing with noise, so the page
 * offers no sketch pad for it.
 */
export function sketchable(channels: number, size: readonly number[]): boolean {
  return channels === 1 && size.length > 0 && Math.max(...size) <= SKETCH_SIDE;
}
