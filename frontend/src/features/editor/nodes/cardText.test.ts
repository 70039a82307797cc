import { describe, expect, it } from 'vitest';
import { summarizeParams } from '../logic/summary';
import { ALONE_PORT_TEXT_COLUMNS, inputPortText, PORT_TEXT_COLUMNS, shownOnCard, textColumns } from './cardText';

describe('node card texts', () => {
  it("names a port taking every input type in one word, and a port's few types in full", () => {
    const name = (type: string) => ({ images: '图像', table: '表格' })[type] ?? type;
    expect(inputPortText(['images', 'table', 'sequence', 'tensor'], name, '输入', '输入')).toBe('输入');
    expect(inputPortText(['images', 'table'], name, '输入', '输入')).toBe('图像 | 表格');
    expect(inputPortText(['table'], name, 'table', 'input')).toBe('表格');
  });

  it('gives a port whose types do not fit half a card its own label, never a cut list', () => {
    const same = (type: string) => type;
    // A sequence layer's port: "sequence | tensor" read "sequence | ten…" on the card.
    expect(inputPortText(['sequence', 'tensor'], same, 'sequence', 'input')).toBe('sequence');
    expect(inputPortText(['tensor', 'logits'], same, 'model output', 'input')).toBe('input');
    // A train node's port has its row to itself: its types fit the card's width.
    expect(inputPortText(['tensor', 'logits'], same, 'model output', 'input', ALONE_PORT_TEXT_COLUMNS)).toBe(
      'tensor | logits',
    );
    expect(inputPortText(['images', 'table', 'tensor'], same, 'a label far too long to fit', 'input')).toBe('input');
    expect(inputPortText(['images', 'table'], same, 'in', 'input')).toBe('in');
    const zh = (type: string) => ({ sequence: '序列', tensor: '张量' })[type] ?? type;
    expect(inputPortText(['sequence', 'tensor'], zh, '序列', '输入')).toBe('序列 | 张量');
    for (const text of ['sequence', '序列 | 张量']) expect(textColumns(text)).toBeLessThanOrEqual(PORT_TEXT_COLUMNS);
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
