import { describe, expect, it } from 'vitest';
import {
  borderBrightness,
  centerCrop,
  compositeOnWhite,
  grayscale,
  luma,
  needsInversion,
  preprocessImage,
  PreprocessError,
  resize,
  rgbaToPlanes,
  roundHalfEven,
  type Planes,
  type Preprocessing,
} from './preprocess';

// Expected numbers come from Pillow 11 and torchvision 0.29 (the server's libraries).
const planes = (values: number[], height: number, width: number, float = false, channels = 1): Planes => ({
  channels,
  height,
  width,
  data: Float32Array.from(values),
  float,
});
const range = (n: number, times = 1) => Array.from({ length: n }, (_, i) => i * times);
const rows = (p: Planes) =>
  Array.from({ length: p.height }, (_, y) => Array.from(p.data.slice(y * p.width, (y + 1) * p.width)));

describe('decoding like Pillow', () => {
  it('converts RGB to gray with its fixed-point luma', () => {
    const pixels = [
      [10, 200, 30],
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
      [123, 45, 67],
      [255, 255, 255],
    ];
    expect(pixels.map(([r, g, b]) => luma(r!, g!, b!))).toEqual([124, 76, 150, 29, 71, 255]);
  });

  it('composites transparency on white', () => {
    const rgba = [
      [200, 100, 50, 128],
      [0, 0, 0, 0],
      [10, 20, 30, 255],
      [255, 0, 0, 1],
      [0, 0, 0, 77],
    ];
    const out = rgba.map(([r, g, b, a]) => [r, g, b].map((v) => compositeOnWhite(v!, a!)));
    expect(out).toEqual([
      [227, 177, 152],
      [255, 255, 255],
      [10, 20, 30],
      [255, 254, 254],
      [178, 178, 178],
    ]);
  });

  it('keeps a gray PNG exact and splits RGB into planes', () => {
    const gray = rgbaToPlanes([7, 7, 7, 255, 200, 200, 200, 255], 2, 1, 1);
    expect(Array.from(gray.data)).toEqual([7, 200]);
    const rgb = rgbaToPlanes([1, 2, 3, 255, 4, 5, 6, 255], 2, 1, 3);
    expect(Array.from(rgb.data)).toEqual([1, 4, 2, 5, 3, 6]);
    expect(() => rgbaToPlanes([1, 2, 3], 2, 1, 1)).toThrow(PreprocessError);
  });
});

describe('resize like torchvision (antialias)', () => {
  const x = planes(range(24, 10), 4, 6);

  it('shrinks uint8 images with rounding', () => {
    expect(rows(resize(x, [2, 3]))).toEqual([
      [50, 68, 86],
      [144, 162, 180],
    ]);
    const z = planes(range(49, 5), 7, 7);
    expect(rows(resize(z, [5, 5]))[0]).toEqual([14, 20, 27, 34, 40]);
    expect(rows(resize(z, [5, 5]))[4]).toEqual([200, 206, 213, 220, 226]);
  });

  it('shrinks float images without rounding', () => {
    const f = planes(
      range(24, 10).map((v) => v / 255),
      4,
      6,
      true,
    );
    const got = rows(resize(f, [2, 3])).flat();
    const want = [0.19607843, 0.26610646, 0.33613446, 0.56582636, 0.63585436, 0.70588237];
    got.forEach((v, i) => expect(v).toBeCloseTo(want[i]!, 6));
  });

  it('enlarges', () => {
    const y = planes([0, 100, 200, 255], 2, 2);
    // torchvision's uint8 kernel works in 16-bit fixed point: at exact halves (205.5 here) it may
    // round the other way, one gray level apart.
    const want = [
      [0, 10, 50, 90, 100],
      [100, 108, 139, 170, 178],
      [200, 205, 228, 250, 255],
    ].flat();
    rows(resize(y, [3, 5]))
      .flat()
      .forEach((v, i) => expect(Math.abs(v - want[i]!)).toBeLessThanOrEqual(1));
    const yf = planes([0, 100, 200, 255], 2, 2, true);
    expect(rows(resize(yf, [3, 5]))[1]).toEqual([100, 107.75, 138.75, 169.75, 177.5]);
  });

  it('supports bicubic and nearest', () => {
    const z = planes(range(49, 5), 7, 7, true);
    const bicubic = rows(resize(z, [3, 4], 'bicubic'));
    [27.1203022, 35.5284118, 44.7135276, 53.1216468].forEach((v, i) => expect(bicubic[0]![i]).toBeCloseTo(v, 3));
    const zu = planes(range(49, 5), 7, 7);
    expect(rows(resize(zu, [3, 4], 'nearest'))).toEqual([
      [0, 5, 15, 25],
      [70, 75, 85, 95],
      [140, 145, 155, 165],
    ]);
  });
});

describe('the other steps', () => {
  it('rounds halves to even like Python', () => {
    expect([0.5, 1.5, 2.5, 2.4, 3.5].map(roundHalfEven)).toEqual([0, 2, 2, 2, 4]);
  });

  it('center-crops and pads like torchvision', () => {
    expect(rows(centerCrop(planes(range(30), 5, 6), [2, 3]))).toEqual([
      [14, 15, 16],
      [20, 21, 22],
    ]);
    expect(rows(centerCrop(planes([1, 2, 3, 4, 5, 6], 2, 3), [5, 4]))).toEqual([
      [0, 0, 0, 0],
      [1, 2, 3, 0],
      [4, 5, 6, 0],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
    ]);
  });

  it('converts to gray like rgb_to_grayscale (uint8 truncates)', () => {
    const rgb = planes([10, 255, 200, 255, 30, 255], 1, 2, false, 3);
    expect(Array.from(grayscale(rgb, 1).data)).toEqual([123, 254]);
    const rgbFloat = planes(
      [10, 255, 200, 255, 30, 255].map((v) => v / 255),
      1,
      2,
      true,
      3,
    );
    const gray = Array.from(grayscale(rgbFloat, 1).data);
    expect(gray[0]).toBeCloseTo(0.48552549, 6);
    expect(gray[1]).toBeCloseTo(0.99990004, 6);
    expect(grayscale(planes([5], 1, 1), 3).channels).toBe(3);
  });
});

describe('preprocessImage', () => {
  const digits: Preprocessing = {
    channels: 1,
    size: [8, 8],
    steps: [
      { op: 'to_float', scale: 1 / 255 },
      { op: 'normalize', mean: [0.3], std: [0.4] },
    ],
    portable: true,
    input_shape: [1, 8, 8],
  };
  const image = (w: number, h: number, value: (i: number) => number) =>
    Uint8ClampedArray.from({ length: w * h * 4 }, (_, i) => (i % 4 === 3 ? 255 : value(Math.floor(i / 4))));

  it('follows model.json: size, then the steps in order', () => {
    const out = preprocessImage(
      image(8, 8, (i) => i * 4),
      8,
      8,
      digits,
    );
    expect(out.shape).toEqual([1, 8, 8]);
    expect(out.data[0]).toBeCloseTo((0 - 0.3) / 0.4, 6);
    expect(out.data[63]).toBeCloseTo((252 / 255 - 0.3) / 0.4, 6);
  });

  it('resizes other sizes to the dataset size first', () => {
    const out = preprocessImage(
      image(16, 16, () => 255),
      16,
      16,
      digits,
    );
    expect(out.shape).toEqual([1, 8, 8]);
    expect(out.data[10]).toBeCloseTo((1 - 0.3) / 0.4, 6);
  });

  it('runs resize and crop steps', () => {
    const spec: Preprocessing = {
      channels: 3,
      size: null,
      steps: [
        { op: 'resize', size: [12, 12], interpolation: 'bilinear', antialias: true },
        { op: 'center_crop', size: [10, 10] },
        { op: 'to_float', scale: 1 / 255 },
      ],
      portable: true,
      input_shape: [3, 10, 10],
    };
    const out = preprocessImage(
      image(20, 30, () => 51),
      20,
      30,
      spec,
    );
    expect(out.shape).toEqual([3, 10, 10]);
    expect(out.data[55]).toBeCloseTo(0.2, 6);
  });

  it('refuses bundles whose steps cannot run in the browser, and shape mismatches', () => {
    const lambda = { ...digits, portable: false, steps: [{ op: 'op.Lambda', params: {} }] };
    expect(() =>
      preprocessImage(
        image(8, 8, () => 0),
        8,
        8,
        lambda,
      ),
    ).toThrow(/op\.Lambda/);
    const wrong = { ...digits, input_shape: [1, 28, 28] };
    expect(() =>
      preprocessImage(
        image(8, 8, () => 0),
        8,
        8,
        wrong,
      ),
    ).toThrow(/1×8×8/);
  });

  it('inverts an image whose paper is the opposite of the training images, as the server does', () => {
    const mnist: Preprocessing = { ...digits, background: 'dark' };
    // Dark ink (a bar in the middle) on white paper.
    const inkOnPaper = image(8, 8, (i) => (Math.floor(i / 8) === 4 ? 0 : 255));
    const auto = preprocessImage(inkOnPaper, 8, 8, mnist);
    expect(auto.inverted).toBe(true);
    expect(auto.data[0]).toBeCloseTo((0 - 0.3) / 0.4, 6);
    expect(auto.data[4 * 8]).toBeCloseTo((1 - 0.3) / 0.4, 6);
    const kept = preprocessImage(inkOnPaper, 8, 8, mnist, false);
    expect(kept.inverted).toBe(false);
    expect(kept.data[0]).toBeCloseTo((1 - 0.3) / 0.4, 6);
    // Same paper as training, mixed or unknown training paper: left alone unless the user asks.
    expect(preprocessImage(inkOnPaper, 8, 8, { ...mnist, background: 'light' }).inverted).toBe(false);
    expect(preprocessImage(inkOnPaper, 8, 8, { ...mnist, background: 'mixed' }).inverted).toBe(false);
    expect(preprocessImage(inkOnPaper, 8, 8, digits).inverted).toBe(false);
    expect(preprocessImage(inkOnPaper, 8, 8, digits, true).inverted).toBe(true);
  });
});

describe('border brightness', () => {
  it('averages the frame a tenth of the smaller side wide, every channel', () => {
    const framed = planes(
      range(20 * 20).map((i) => (i % 20 >= 2 && i % 20 < 18 && i >= 40 && i < 360 ? 0 : 200)),
      20,
      20,
    );
    expect(borderBrightness(framed)).toBe(200);
    expect(needsInversion(framed, 'dark')).toBe(true);
    expect(needsInversion(framed, 'light')).toBe(false);
    expect(borderBrightness(planes([10, 20, 30, 40], 2, 2))).toBe(25);
  });
});
