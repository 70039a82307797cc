// Decoding an image file in the browser into RGBA bytes, as the server decodes it with Pillow:
// no colour management, EXIF orientation applied, alpha not premultiplied.
export interface Decoded {
  rgba: Uint8ClampedArray;
  width: number;
  height: number;
}

export async function decodeImage(blob: Blob): Promise<Decoded> {
  const bitmap = await createImageBitmap(blob, {
    premultiplyAlpha: 'none',
    colorSpaceConversion: 'none',
    imageOrientation: 'from-image',
  });
  try {
    const canvas = document.createElement('canvas');
    canvas.width = bitmap.width;
    canvas.height = bitmap.height;
    const context = canvas.getContext('2d', { willReadFrequently: true });
    if (!context) throw new Error('this browser cannot read image pixels (no 2D canvas)');
    context.drawImage(bitmap, 0, 0);
    const { data } = context.getImageData(0, 0, bitmap.width, bitmap.height);
    return { rgba: data, width: bitmap.width, height: bitmap.height };
  } finally {
    bitmap.close();
  }
}

/** Gray values as a PNG file of width x height. */
export async function grayPng(rgba: Uint8ClampedArray, width: number, height: number, name: string): Promise<File> {
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext('2d');
  if (!context) throw new Error('this browser cannot draw (no 2D canvas)');
  context.putImageData(new ImageData(new Uint8ClampedArray(rgba), width, height), 0, 0);
  const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/png'));
  if (!blob) throw new Error('the drawing could not be encoded as PNG');
  return new File([blob], name, { type: 'image/png' });
}
