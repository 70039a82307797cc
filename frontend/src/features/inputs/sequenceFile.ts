// Reading a sequence file in the browser, only to plot what is sent for prediction (the server reads
// the file again and its errors are the ones that count): a UCR/UEA .ts file's series, a CSV of one
// sequence (a row per step, a column per feature), or an .npy array (N, T, F), (T, F) or (T,).
// Bounded: at most MAX_SERIES series are kept, and a file that cannot be read gives null.

/** One sequence: per step, its features' values. */
export type Series = number[][];

export const MAX_SERIES = 16;

/** The series a .ts file's data lines hold: dimensions separated by ':', values by ',', an optional
 * label last ('?' is a missing value). */
export function parseTs(text: string, maxSeries = MAX_SERIES): Series[] | null {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((line) => line.trim().toLowerCase() === '@data');
  if (start < 0) return null;
  const dims = declaredDimensions(lines.slice(0, start));
  const labeled = declaresLabels(lines.slice(0, start));
  const out: Series[] = [];
  for (const raw of lines.slice(start + 1)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    let segments = line.split(':');
    // A label follows the values when there is one segment more than the dimensions (or, dimensions
    // unknown, when the last segment holds no comma and others do).
    // A file declaring no labels (no @classLabel true, no @targetLabel true) holds values only.
    if (labeled && (dims !== null ? segments.length > dims : segments.length > 1)) segments = segments.slice(0, -1);
    const columns = segments.map((segment) => segment.split(',').map(toNumber));
    const length = Math.max(...columns.map((c) => c.length));
    out.push(Array.from({ length }, (_, step) => columns.map((c) => c[step] ?? Number.NaN)));
    if (out.length >= maxSeries) break;
  }
  return out.length ? out : null;
}

function declaresLabels(header: string[]): boolean {
  return header.some((line) => /^@(classlabel|targetlabel)\s+true\b/i.test(line.trim()));
}

function declaredDimensions(header: string[]): number | null {
  for (const line of header) {
    const [tag, value] = line.trim().split(/\s+/);
    if (tag?.toLowerCase() === '@dimensions' && value) return Number(value) || null;
    if (tag?.toLowerCase() === '@univariate' && value?.toLowerCase() === 'true') return 1;
  }
  return null;
}

const toNumber = (text: string): number => {
  const trimmed = text.trim();
  return trimmed === '' || trimmed === '?' ? Number.NaN : Number(trimmed);
};

/** A CSV (or TSV) of one sequence: a header row of names is skipped. */
export function parseCsvSeries(text: string): Series[] | null {
  const delimiter = text.includes('\t') && !text.includes(',') ? '\t' : ',';
  const rows = text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map((line) => line.split(delimiter).map(toNumber));
  if (rows.length && rows[0]!.some((value) => Number.isNaN(value))) rows.shift();
  if (!rows.length || rows.some((row) => row.every((value) => Number.isNaN(value)))) return null;
  return [rows];
}

const DTYPES: Record<string, { size: number; read: (view: DataView, at: number, little: boolean) => number }> = {
  f4: { size: 4, read: (view, at, little) => view.getFloat32(at, little) },
  f8: { size: 8, read: (view, at, little) => view.getFloat64(at, little) },
  i4: { size: 4, read: (view, at, little) => view.getInt32(at, little) },
  i8: { size: 8, read: (view, at, little) => Number(view.getBigInt64(at, little)) },
  i2: { size: 2, read: (view, at, little) => view.getInt16(at, little) },
  u1: { size: 1, read: (view, at) => view.getUint8(at) },
  i1: { size: 1, read: (view, at) => view.getInt8(at) },
};

/** An .npy array of numbers in C order; an object (pickled) array or any other layout gives null. */
export function parseNpy(buffer: ArrayBuffer, maxSeries = MAX_SERIES): Series[] | null {
  const bytes = new Uint8Array(buffer);
  if (bytes.length < 10 || bytes[0] !== 0x93 || String.fromCharCode(...bytes.slice(1, 6)) !== 'NUMPY') return null;
  const view = new DataView(buffer);
  const major = bytes[6]!;
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = (major === 1 ? 10 : 12) + headerLength;
  const header = new TextDecoder().decode(bytes.slice(major === 1 ? 10 : 12, start));
  const descr = /'descr':\s*'([<>|=])(\w\d)'/.exec(header);
  const fortran = /'fortran_order':\s*True/.test(header);
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  const dtype = descr ? DTYPES[descr[2]!] : undefined;
  if (!descr || !dtype || fortran || shapeText === undefined) return null;
  const shape = shapeText
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map(Number);
  const little = descr[1] !== '>';
  const [n, t, f] = shape.length === 3 ? shape : shape.length === 2 ? [1, shape[0]!, shape[1]!] : [1, shape[0] ?? 0, 1];
  if (!n || !t || !f || start + n * t * f * dtype.size > buffer.byteLength) return null;
  const out: Series[] = [];
  for (let s = 0; s < Math.min(n, maxSeries); s++) {
    out.push(
      Array.from({ length: t }, (_, step) =>
        Array.from({ length: f }, (_, feature) =>
          dtype.read(view, start + ((s * t + step) * f + feature) * dtype.size, little),
        ),
      ),
    );
  }
  return out;
}

/** The series of an uploaded file, read by its suffix; null when the browser cannot read it. */
export async function readSeries(file: File): Promise<Series[] | null> {
  const name = file.name.toLowerCase();
  try {
    if (name.endsWith('.npy')) return parseNpy(await file.arrayBuffer());
    if (name.endsWith('.ts')) return parseTs(await file.text());
    if (name.endsWith('.csv') || name.endsWith('.tsv')) return parseCsvSeries(await file.text());
  } catch {
    // unreadable here: the server's answer still comes
  }
  return null;
}
