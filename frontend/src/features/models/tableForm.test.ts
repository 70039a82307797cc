import { describe, expect, it } from 'vitest';
import type { ColumnPublic, RowPrediction } from './api';
import {
  csvCell,
  delimiterFor,
  emptyForm,
  formatValue,
  formToRow,
  parseCsv,
  parseNumber,
  predictionCells,
  predictionHeader,
  excelCsv,
  predictionsCsv,
  rowToForm,
  toCsv,
} from './tableForm';

// Columns as the server describes a table model's inputs (a slice of diabetes plus a category).
const columns: ColumnPublic[] = [
  { name: 'age', kind: 'number', missing: 0, categories: [] },
  { name: 'bmi', kind: 'number', missing: 2, categories: [] },
  { name: 'sex', kind: 'category', missing: 0, categories: ['female', 'male'] },
];

describe('the prediction form', () => {
  it('starts empty, one field per column', () => {
    expect(emptyForm(columns)).toEqual({ age: '', bmi: '', sex: '' });
  });

  it('turns the fields into one row: numbers parsed, categories as text, empty as missing', () => {
    expect(formToRow(columns, { age: ' 59 ', bmi: '', sex: 'male' })).toEqual({
      row: { age: 59, bmi: null, sex: 'male' },
      problems: {},
    });
    expect(formToRow(columns, {}).row).toEqual({ age: null, bmi: null, sex: null });
  });

  it('reads the missing-value texts of a table file as missing, as the server does', () => {
    expect(formToRow(columns, { age: 'NA', bmi: ' n/a ', sex: 'NULL' })).toEqual({
      row: { age: null, bmi: null, sex: null },
      problems: {},
    });
  });

  it('names the field that is wrong instead of sending it', () => {
    const { problems } = formToRow(columns, { age: 'sixty', bmi: '1,000', sex: 'other' });
    expect(problems).toEqual({ age: 'notNumber', bmi: 'notNumber', sex: 'unknownCategory' });
  });

  it('reads numbers as people type them', () => {
    expect(parseNumber('1.5')).toBe(1.5);
    expect(parseNumber('-2')).toBe(-2);
    expect(parseNumber('+.5')).toBe(0.5);
    expect(parseNumber('3e-2')).toBe(0.03);
    expect(parseNumber('12,5')).toBe(12.5);
    expect(parseNumber('1,000')).toBeNull();
    expect(parseNumber('0x10')).toBeNull();
    expect(parseNumber('Infinity')).toBeNull();
    expect(parseNumber('1e999')).toBeNull();
    expect(parseNumber('')).toBeNull();
  });

  it('goes back from a row to the form and round-trips', () => {
    const values = rowToForm(columns, { age: 61, bmi: null, sex: 'female', extra: 1 });
    expect(values).toEqual({ age: '61', bmi: '', sex: 'female' });
    expect(formToRow(columns, values).row).toEqual({ age: 61, bmi: null, sex: 'female' });
  });
});

describe('CSV in and out', () => {
  it('parses quoted fields, doubled quotes, CRLF, a BOM and blank lines', () => {
    const text = '\ufeffname,note\r\n"Smith, J","said ""hi"""\r\n\r\nLee,"two\nlines"\n';
    expect(parseCsv(text)).toEqual({
      header: ['name', 'note'],
      rows: [
        ['Smith, J', 'said "hi"'],
        ['Lee', 'two\nlines'],
      ],
    });
  });

  it('parses TSV by the file name and keeps empty cells', () => {
    expect(delimiterFor('rows.TSV')).toBe('\t');
    expect(delimiterFor('rows.csv')).toBe(',');
    expect(parseCsv('a\tb\n1\t\n', '\t')).toEqual({ header: ['a', 'b'], rows: [['1', '']] });
    expect(parseCsv('a,b\n1,2')).toEqual({ header: ['a', 'b'], rows: [['1', '2']] });
  });

  it('writes cells a spreadsheet will neither split nor run', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "x"')).toBe('"say ""x"""');
    expect(csvCell(-1.5)).toBe('-1.5');
    expect(csvCell('-1.5')).toBe('-1.5');
    expect(csvCell('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell(null)).toBe('');
    expect(csvCell(Number.NaN)).toBe('');
    expect(toCsv(['a', 'b'], [[1, 'x']])).toBe('a,b\r\n1,x\r\n');
  });
});

describe('prediction results', () => {
  const values: RowPrediction[] = [{ value: 151.25 }, { value: -3 }];
  const classes: RowPrediction[] = [
    {
      label: 'setosa',
      index: 0,
      probability: 0.97,
      top_k: [{ class: 'setosa', probability: 0.97 }],
      probabilities: [0.97, 0.02, 0.01],
    },
  ];

  it('adds the answer columns named after the target', () => {
    expect(predictionHeader('progression', true)).toEqual(['predicted_progression']);
    expect(predictionHeader('species', false)).toEqual(['predicted_species', 'probability']);
    expect(predictionHeader(null, true)).toEqual(['predicted_value']);
    expect(predictionCells(values[0])).toEqual([151.25]);
    expect(predictionCells(classes[0])).toEqual(['setosa', 0.97]);
  });

  it('downloads the file rows with the answers appended', () => {
    const table = parseCsv('age,bmi\n59,32.1\n48,\n');
    expect(predictionsCsv(table, values, 'progression', true)).toBe(
      'age,bmi,predicted_progression\r\n59,32.1,151.25\r\n48,,-3\r\n',
    );
    expect(predictionsCsv(parseCsv('x\n1\n'), classes, 'species', false)).toBe(
      'x,predicted_species,probability\r\n1,setosa,0.97\r\n',
    );
  });

  it('reads a file with the delimiter the server detects', () => {
    expect(delimiterFor('eu.csv', '\uFEFFa;b;t\r\n1,5;2;x\r\n')).toBe(';');
    expect(delimiterFor('t.csv', 'name,note\nann,"a; b"\n')).toBe(',');
    expect(delimiterFor('t.tsv', 'x\n1\n')).toBe('\t');
    expect(delimiterFor('p.csv', 'a|b\n1|2\n')).toBe('|');
  });

  it('writes the download with a byte-order mark, so Excel on Windows reads it as UTF-8', () => {
    const text = excelCsv(predictionsCsv(parseCsv('city\nZürich\n'), classes.slice(0, 1), 'kind', false));
    expect(text).toBe('\uFEFFcity,predicted_kind,probability\r\nZürich,setosa,0.97\r\n');
    expect(new TextEncoder().encode(text).slice(0, 3)).toEqual(new Uint8Array([0xef, 0xbb, 0xbf]));
  });

  it('numbers the rows when the file and the answers do not line up', () => {
    expect(predictionsCsv(parseCsv('age\n59\n'), values, 'y', true)).toBe('row,predicted_y\r\n1,151.25\r\n2,-3\r\n');
    expect(predictionsCsv(null, values, 'y', true)).toBe('row,predicted_y\r\n1,151.25\r\n2,-3\r\n');
  });

  it('shows a value with about five significant digits', () => {
    expect(formatValue(151.254321)).toBe('151.25');
    expect(formatValue(-3)).toBe('-3');
    expect(formatValue(0.00001234)).toBe('1.234e-5');
    expect(formatValue(Number.NaN)).toBe('—');
  });
});
