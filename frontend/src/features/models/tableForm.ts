// A table model's prediction form and its CSV batch: pure conversions between what the user
// types, the rows the server takes (POST /api/models/{id}/predict/rows) and the CSV files that go
// in and come out. No DOM here, so every rule is unit-tested.
import type { ColumnPublic, RowPrediction, TableRow } from './api';

/** What the form holds: the text of each input, by column name ('' is a missing value). */
export type FormValues = Record<string, string>;

export type FieldProblem = 'notNumber' | 'unknownCategory';

/**
 * Texts that mean a missing value, as the server reads every table (engine/data/tables.py
 * MISSING_TOKENS, pandas' defaults; tests/engine/data/test_tables.py holds the two lists equal):
 * "NA" in a number field is a missing value, as it was in the training file, not "not a number".
 */
// Written as JSON: tests/engine/data/test_tables.py reads it to compare with the engine's list.
// prettier-ignore
export const MISSING_TOKENS: ReadonlySet<string> = new Set([
  "#N/A",
  "#N/A N/A",
  "#NA",
  "-1.#IND",
  "-1.#QNAN",
  "-NaN",
  "-nan",
  "1.#IND",
  "1.#QNAN",
  "<NA>",
  "N/A",
  "NA",
  "NULL",
  "NaN",
  "None",
  "n/a",
  "nan",
  "null",
]);

export function emptyForm(columns: readonly ColumnPublic[]): FormValues {
  return Object.fromEntries(columns.map((column) => [column.name, '']));
}

/** A number as people type it: "1.5", " -2 ", "3e-2", "1,5" (a decimal comma); null when it is none. */
export function parseNumber(text: string): number | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  // One comma and no dot: a decimal comma. "1,000" is ambiguous and refused rather than guessed.
  const normal =
    /^[-+]?\d+,\d+$/.test(trimmed) && !/^[-+]?\d{1,3},\d{3}$/.test(trimmed) ? trimmed.replace(',', '.') : trimmed;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(normal)) return null;
  const value = Number(normal);
  return Number.isFinite(value) ? value : null;
}

/**
 * The form as one row: numbers parsed, categories as their text, an empty field as null (a missing
 * value the model's Impute node fills, or the server names). Problems are per column.
 */
export function formToRow(
  columns: readonly ColumnPublic[],
  values: FormValues,
): { row: TableRow; problems: Record<string, FieldProblem> } {
  const row: TableRow = {};
  const problems: Record<string, FieldProblem> = {};
  for (const column of columns) {
    const text = (values[column.name] ?? '').trim();
    if (!text || MISSING_TOKENS.has(text)) {
      row[column.name] = null;
      continue;
    }
    if (column.kind === 'number') {
      const value = parseNumber(text);
      if (value === null) problems[column.name] = 'notNumber';
      row[column.name] = value;
    } else {
      if (column.categories?.length && !column.categories.includes(text)) problems[column.name] = 'unknownCategory';
      row[column.name] = text;
    }
  }
  return { row, problems };
}

/** A row back into the form (to edit a row of a file, or to fill in an example). */
export function rowToForm(columns: readonly ColumnPublic[], row: Readonly<Record<string, unknown>>): FormValues {
  const values: FormValues = {};
  for (const column of columns) {
    const value = row[column.name];
    values[column.name] = value === null || value === undefined ? '' : String(value);
  }
  return values;
}

// --- CSV --------------------------------------------------------------------------------------

export interface ParsedTable {
  header: string[];
  rows: string[][];
}

export type Delimiter = ',' | ';' | '\t' | '|';

/**
 * The delimiter of a file, as the server detects it (engine/data/table_text.py): of ',', ';', tab
 * and '|', the one giving the most columns with every one of the first lines agreeing; else the
 * name's default (tab for .tsv, else comma). Excel writes ';' in many European locales.
 */
export function delimiterFor(filename: string, text = ''): Delimiter {
  const fallback: Delimiter = filename.toLowerCase().endsWith('.tsv') ? '\t' : ',';
  let sample = text.slice(0, 65536);
  if (text.length > sample.length || !sample.endsWith('\n')) {
    const cut = sample.lastIndexOf('\n');
    if (cut >= 0) sample = sample.slice(0, cut + 1);
  }
  let best: Delimiter = fallback;
  let most = 1;
  for (const delimiter of [fallback as Delimiter, ...([',', ';', '\t', '|'] as const).filter((d) => d !== fallback)]) {
    const { header, rows } = parseCsv(sample, delimiter);
    const lines = [header, ...rows.slice(0, 49)];
    if (header.length > most && lines.every((line) => line.length === header.length)) {
      best = delimiter;
      most = header.length;
    }
  }
  return best;
}

/**
 * RFC 4180 CSV: quoted fields may hold delimiters, quotes ("") and line breaks; CRLF or LF rows;
 * a byte order mark is dropped; blank lines are skipped (as the server's reader skips them).
 */
export function parseCsv(text: string, delimiter: Delimiter = ','): ParsedTable {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endRecord = () => {
    record.push(field);
    if (record.length > 1 || record[0] !== '') records.push(record);
    record = [];
    field = '';
  };
  for (; i < text.length; i += 1) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 1;
        } else quoted = false;
      } else field += char;
    } else if (char === '"' && field === '') quoted = true;
    else if (char === delimiter) {
      record.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i += 1;
      endRecord();
    } else field += char;
  }
  if (field !== '' || record.length) endRecord();
  const [header = [], ...rows] = records;
  return { header: header.map((name) => name.trim()), rows };
}

/**
 * One CSV cell. Text that a spreadsheet would run as a formula (=, +, -, @ first, not a number)
 * gets a leading apostrophe: a downloaded file never executes what an uploaded one carried.
 */
export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value;
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text) && parseNumber(text) === null) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(header: readonly string[], rows: readonly (readonly (string | number | null)[])[]): string {
  return [header, ...rows].map((row) => row.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

/** A CSV as Excel on Windows reads it as UTF-8: with a byte-order mark (without one, 'Zürich' and
 * '猫' open as mojibake). */
export function excelCsv(text: string): string {
  return `\uFEFF${text}`;
}

// --- answers ----------------------------------------------------------------------------------

export function isValue(prediction: RowPrediction): prediction is Extract<RowPrediction, { value: number }> {
  return 'value' in prediction;
}

/** The columns a prediction adds to a results table or CSV, named after the target. */
export function predictionHeader(target: string | null, regression: boolean): string[] {
  const name = `predicted_${target || 'value'}`;
  return regression ? [name] : [name, 'probability'];
}

export function predictionCells(prediction: RowPrediction | undefined): (string | number | null)[] {
  if (!prediction) return [null, null];
  return isValue(prediction) ? [prediction.value] : [prediction.label, prediction.probability];
}

/**
 * The download: every input row of the file with the model's answer appended. When the file and
 * the answers disagree in length (the server skipped nothing so far; a parser difference would show
 * here), the rows are numbered instead of guessed.
 */
export function predictionsCsv(
  table: ParsedTable | null,
  predictions: readonly RowPrediction[],
  target: string | null,
  regression: boolean,
): string {
  const added = predictionHeader(target, regression);
  const width = regression ? 1 : 2;
  const cells = (prediction: RowPrediction | undefined) => predictionCells(prediction).slice(0, width);
  if (table && table.rows.length === predictions.length) {
    return toCsv(
      [...table.header, ...added],
      table.rows.map((row, i) => [...table.header.map((_, c) => row[c] ?? ''), ...cells(predictions[i])]),
    );
  }
  return toCsv(
    ['row', ...added],
    predictions.map((prediction, i) => [i + 1, ...cells(prediction)]),
  );
}

/** A predicted value for display: about five significant digits, exponent form when tiny or huge. */
export function formatValue(value: number): string {
  if (!Number.isFinite(value)) return '—';
  const size = Math.abs(value);
  if (size !== 0 && (size < 1e-3 || size >= 1e7)) return value.toExponential(3);
  return String(Number(value.toPrecision(5)));
}
