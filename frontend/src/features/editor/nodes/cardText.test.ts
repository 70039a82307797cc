import { describe, expect, it } from 'vitest';
import { summarizeParams } from '../logic/summary';
import { inputPortText, shownOnCard } from './cardText';

describe('node card texts', () => {
  it("names a port taking every input type in one word, and a port's few types in full", () => {
    const name = (type: string) => ({ images: '图像', table: '表格' })[type] ?? type;
    expect(inputPortText(['images', 'table', 'sequence', 'tensor'], name, '输入')).toBe('输入');
    expect(inputPortText(['images', 'table'], name, '输入')).toBe('图像 | 表格');
    expect(inputPortText(['table'], name, 'input')).toBe('表格');
  });

  it("shows no dataset id among a Table node's params", () => {
    const schema = {
      properties: {
        source: { type: 'string', title: 'Table' },
        dataset_id: { type: 'string', title: 'Uploaded table' },
        target: { type: 'string', title: 'Target column' },
      },
    };
    const rows = summarizeParams({ source: 'uploaded', dataset_id: '3f2a9c0d1e4b5a6f', target: 'species' }, schema);
    expect(shownOnCard(rows).map((row) => row.value)).toEqual(['uploaded', 'species']);
  });
});
