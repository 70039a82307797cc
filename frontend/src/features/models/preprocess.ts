// The preprocessing of a model bundle (model.json's `preprocessing` section) repeated in the
// browser, so the ONNX export sees the numbers the server's PyTorch model sees. Pure: decoded
// pixels in, a CHW Float32Array out. It follows src/dragdl/engine/inputs/image_decode.py (alpha on
// white, Pillow's gray conversion, bilinear antialiased resize) and the portable steps that
// engine/bundle/writer.py describes (to_float, resize, center_crop, grayscale, normalize).

export interface PreprocessStep {
  op: string;
  [key: string]: unknown;
}

/** The training images' paper (model.json); absent in bundles written before it was recorded. */
export type Background = 'dark' | 'light' | 'mixed';

export interface Preprocessing {
  channels: 1 | 3;
  size: number[] | null;
  alpha?: string;
  background?: Background | null;
  steps: PreprocessStep[];
  portable: boolean;
  input_shape: (number | null)[];
  mean?: number[] | null;
  std?: number[] | null;
}

/** An image as CHW planes. `float` false: integer values 0..255 (a uint8 tensor on the server). */
export interface Planes {
  channels: number;
  height: number;
  width: number;
  data: Float32Array;
  float: boolean;
}

export class PreprocessError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PreprocessError';
  }
}

// --- decoding: RGBA pixels -> the dataset's channels ---------------------------------------------

/** Pillow's Image.alpha_composite of a pixel over opaque white (fixed point, 7 precision bits). */
export function compositeOnWhite(value: number, alpha: number): number {
  if (alpha === 255) return value;
  if (alpha === 0) return 255;
  const coef1 = alpha * 128;
  const coef2 = 255 * 128 - coef1;
  const tmp = value * coef1 + 255 * coef2 + (0x80 << 7);
  return (((tmp >> 8) + tmp) >> 8) >> 7;
}

/** Pillow's RGB -> L: ITU-R 601-2 luma in 16-bit fixed point, rounded. */
export function luma(r: number, g: number, b: number): number {
  return (r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16;
}

/** Canvas RGBA bytes -> uint8 planes with 1 (gray) or 3 (RGB) channels, transparency on white. */
export function rgbaToPlanes(rgba: ArrayLike<number>, width: number, height: number, channels: 1 | 3): Planes {
  const count = width * height;
  if (rgba.length !== count * 4) throw new PreprocessError(`expected ${count * 4} RGBA bytes, got ${rgba.length}`);
  const data = new Float32Array(channels * count);
  for (let i = 0; i < count; i += 1) {
    const a = rgba[i * 4 + 3]!;
    const r = compositeOnWhite(rgba[i * 4]!, a);
    const g = compositeOnWhite(rgba[i * 4 + 1]!, a);
    const b = compositeOnWhite(rgba[i * 4 + 2]!, a);
    if (channels === 1) data[i] = luma(r, g, b);
    else {
      data[i] = r;
      data[count + i] = g;
      data[2 * count + i] = b;
    }
  }
  return { channels, height, width, data, float: false };
}

// --- resize: Pillow's (and torchvision's antialiased) separable resampling ----------------------

type Filter = { support: number; weight: (x: number) => number };

const BILINEAR: Filter = { support: 1, weight: (x) => Math.max(0, 1 - Math.abs(x)) };
const BICUBIC: Filter = {
  support: 2,
  weight: (x) => {
    const a = -0.5;
    const t = Math.abs(x);
    if (t < 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2) return (((t - 5) * t + 8) * t - 4) * a;
    return 0;
  },
};

interface Coefficients {
  start: number[];
  weights: number[][];
}

function coefficients(inSize: number, outSize: number, filter: Filter): Coefficients {
  const scale = inSize / outSize;
  const filterScale = Math.max(scale, 1);
  const support = filter.support * filterScale;
  const start: number[] = [];
  const weights: number[][] = [];
  for (let i = 0; i < outSize; i += 1) {
    const center = (i + 0.5) * scale;
    const lo = Math.max(Math.trunc(center - support + 0.5), 0);
    const hi = Math.min(Math.trunc(center + support + 0.5), inSize);
    const row: number[] = [];
    let total = 0;
    for (let x = lo; x < hi; x += 1) {
      const w = filter.weight((x - center + 0.5) / filterScale);
      row.push(w);
      total += w;
    }
    start.push(lo);
    weights.push(total === 0 ? row : row.map((w) => w / total));
  }
  return { start, weights };
}

const toByte = (value: number) => Math.min(255, Math.max(0, Math.round(value)));

function resizeAxis(src: Planes, outSize: number, horizontal: boolean, filter: Filter): Planes {
  const { channels, height, width, float } = src;
  const inSize = horizontal ? width : height;
  const outH = horizontal ? height : outSize;
  const outW = horizontal ? outSize : width;
  if (inSize === outSize) return src;
  const { start, weights } = coefficients(inSize, outSize, filter);
  const data = new Float32Array(channels * outH * outW);
  for (let c = 0; c < channels; c += 1) {
    const inBase = c * height * width;
    const outBase = c * outH * outW;
    for (let y = 0; y < outH; y += 1) {
      for (let x = 0; x < outW; x += 1) {
        const i = horizontal ? x : y;
        const row = weights[i]!;
        let sum = 0;
        for (let k = 0; k < row.length; k += 1) {
          const s = start[i]! + k;
          sum += row[k]! * src.data[horizontal ? inBase + y * width + s : inBase + s * width + x]!;
        }
        data[outBase + y * outW + x] = float ? sum : toByte(sum);
      }
    }
  }
  return { channels, height: outH, width: outW, data, float };
}

function resizeNearest(src: Planes, outH: number, outW: number): Planes {
  const { channels, height, width } = src;
  const data = new Float32Array(channels * outH * outW);
  const sy = height / outH;
  const sx = width / outW;
  for (let c = 0; c < channels; c += 1) {
    for (let y = 0; y < outH; y += 1) {
      const iy = Math.min(Math.floor(y * sy), height - 1);
      for (let x = 0; x < outW; x += 1) {
        const ix = Math.min(Math.floor(x * sx), width - 1);
        data[c * outH * outW + y * outW + x] = src.data[c * height * width + iy * width + ix]!;
      }
    }
  }
  return { ...src, height: outH, width: outW, data };
}

/** Resize to [height, width] the way torchvision's F.resize(antialias=True) does. */
export function resize(src: Planes, size: readonly number[], interpolation = 'bilinear'): Planes {
  const [outH, outW = outH] = size;
  if (!outH || !outW) throw new PreprocessError(`resize: bad size ${JSON.stringify(size)}`);
  if (outH === src.height && outW === src.width) return src;
  if (interpolation === 'nearest') return resizeNearest(src, outH, outW);
  const filter = interpolation === 'bicubic' ? BICUBIC : BILINEAR;
  return resizeAxis(resizeAxis(src, outW, true, filter), outH, false, filter);
}

// --- polarity: inverting an input whose paper is the opposite of the training images' -------------
// As engine/inputs/image_decode.py: the frame a tenth of the smaller side wide (at least one pixel) of the
// uint8 planes, all channels; darker than 128 on average is dark paper.

export function borderBrightness(src: Planes): number {
  const { channels, height, width, data } = src;
  const ring = Math.max(1, Math.floor(Math.min(height, width) / 10));
  let sum = 0;
  let count = 0;
  for (let c = 0; c < channels; c += 1) {
    for (let y = 0; y < height; y += 1) {
      const edgeRow = y < ring || y >= height - ring;
      for (let x = 0; x < width; x += 1) {
        if (edgeRow || x < ring || x >= width - ring) {
          sum += data[c * height * width + y * width + x]!;
          count += 1;
        }
      }
    }
  }
  if (count === 0) return data.reduce((a, b) => a + b, 0) / Math.max(1, data.length);
  return sum / count;
}

/** True when the planes' paper is the opposite of a dark or light training background. */
export function needsInversion(src: Planes, background: Background | null | undefined): boolean {
  if (background !== 'dark' && background !== 'light') return false;
  return (borderBrightness(src) < 128 ? 'dark' : 'light') !== background;
}

export function invertPlanes(src: Planes): Planes {
  return { ...src, data: src.data.map((v) => 255 - v) };
}

// --- the other steps ------------------------------------------------------------------------------

/** Python's round(): halves go to the even neighbour. */
export function roundHalfEven(value: number): number {
  const floor = Math.floor(value);
  const diff = value - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** torchvision's center_crop: centred, zero-padded when the crop is larger than the image. */
export function centerCrop(src: Planes, size: readonly number[]): Planes {
  const [outH, outW = outH] = size;
  if (!outH || !outW) throw new PreprocessError(`center_crop: bad size ${JSON.stringify(size)}`);
  const offset = (inSize: number, out: number) =>
    out > inSize ? -Math.floor((out - inSize) / 2) : roundHalfEven((inSize - out) / 2);
  const top = offset(src.height, outH);
  const left = offset(src.width, outW);
  const data = new Float32Array(src.channels * outH * outW);
  for (let c = 0; c < src.channels; c += 1) {
    for (let y = 0; y < outH; y += 1) {
      const sy = y + top;
      if (sy < 0 || sy >= src.height) continue;
      for (let x = 0; x < outW; x += 1) {
        const sx = x + left;
        if (sx < 0 || sx >= src.width) continue;
        data[c * outH * outW + y * outW + x] = src.data[c * src.height * src.width + sy * src.width + sx]!;
      }
    }
  }
  return { ...src, height: outH, width: outW, data };
}

/** torchvision's rgb_to_grayscale (float32 arithmetic; a uint8 result is truncated like .to(uint8)). */
export function grayscale(src: Planes, channels: number): Planes {
  const plane = src.height * src.width;
  let gray: Float32Array;
  if (src.channels === 1) gray = src.data.slice(0, plane);
  else {
    gray = new Float32Array(plane);
    const f = Math.fround;
    for (let i = 0; i < plane; i += 1) {
      const value = f(
        f(f(src.data[i]! * f(0.2989)) + f(src.data[plane + i]! * f(0.587))) + f(src.data[2 * plane + i]! * f(0.114)),
      );
      gray[i] = src.float ? value : Math.trunc(value);
    }
  }
  if (channels !== 3) return { ...src, channels: 1, data: gray };
  const data = new Float32Array(3 * plane);
  data.set(gray, 0);
  data.set(gray, plane);
  data.set(gray, 2 * plane);
  return { ...src, channels: 3, data };
}

export function toFloat(src: Planes, scale: number): Planes {
  if (src.float) return src;
  return { ...src, data: src.data.map((v) => v * scale), float: true };
}

export function normalize(src: Planes, mean: readonly number[], std: readonly number[]): Planes {
  if (!src.float) throw new PreprocessError('normalize needs float values: to_float must come first');
  const plane = src.height * src.width;
  const data = new Float32Array(src.data.length);
  for (let c = 0; c < src.channels; c += 1) {
    const m = mean[c] ?? mean[0] ?? 0;
    const s = std[c] ?? std[0] ?? 1;
    for (let i = 0; i < plane; i += 1) data[c * plane + i] = (src.data[c * plane + i]! - m) / s;
  }
  return { ...src, data };
}

const numbers = (value: unknown): number[] | null =>
  Array.isArray(value) && value.every((v) => typeof v === 'number') ? (value as number[]) : null;

function applyStep(planes: Planes, step: PreprocessStep): Planes {
  switch (step.op) {
    case 'to_float':
      return toFloat(planes, typeof step.scale === 'number' ? step.scale : 1 / 255);
    case 'resize': {
      const size = numbers(step.size);
      if (!size) throw new PreprocessError('resize: the step has no size');
      return resize(planes, size, typeof step.interpolation === 'string' ? step.interpolation : 'bilinear');
    }
    case 'center_crop': {
      const size = numbers(step.size);
      if (!size) throw new PreprocessError('center_crop: the step has no size');
      return centerCrop(planes, size);
    }
    case 'grayscale':
      return grayscale(planes, typeof step.channels === 'number' ? step.channels : 1);
    case 'normalize': {
      const mean = numbers(step.mean);
      const std = numbers(step.std);
      if (!mean || !std) throw new PreprocessError('normalize: the step has no mean/std');
      return normalize(planes, mean, std);
    }
    default:
      throw new PreprocessError(`the step “${step.op}” cannot run in the browser`);
  }
}

/**
 * Decoded RGBA pixels -> the network input, as CHW float32, and whether the image was inverted.
 * `invert` null: when its paper is the opposite of the training images' (as the server decides);
 * true or false: as the user says. Throws PreprocessError for a non-portable bundle or when the
 * result does not have the model's input shape.
 */
export function preprocessImage(
  rgba: ArrayLike<number>,
  width: number,
  height: number,
  spec: Preprocessing,
  invert: boolean | null = null,
): { data: Float32Array; shape: [number, number, number]; inverted: boolean } {
  if (!spec.portable) {
    const odd = spec.steps.find(
      (step) => !['to_float', 'resize', 'center_crop', 'grayscale', 'normalize'].includes(step.op),
    );
    throw new PreprocessError(`the step “${odd?.op ?? '?'}” cannot run in the browser`);
  }
  let planes = rgbaToPlanes(rgba, width, height, spec.channels);
  if (spec.size) planes = resize(planes, spec.size, 'bilinear');
  const inverted = invert ?? needsInversion(planes, spec.background);
  if (inverted) planes = invertPlanes(planes);
  for (const step of spec.steps) planes = applyStep(planes, step);
  if (!planes.float) planes = toFloat(planes, 1 / 255);
  const shape: [number, number, number] = [planes.channels, planes.height, planes.width];
  spec.input_shape.forEach((dim, i) => {
    if (dim != null && dim !== shape[i]) {
      throw new PreprocessError(`the input is ${shape.join('×')}, the model expects ${spec.input_shape.join('×')}`);
    }
  });
  return { data: planes.data, shape, inverted };
}
