// One way to write a date across the web UI: the Open and Versions dialogs wrote '11/26/2026,
// 8:53:00 PM' (and read a server time without its zone as local time) where every list wrote
// '26 Nov 2026, 20:53'.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forbiddenLines, offences } from '../../test/nameScan';
import { formatDate } from './format';

describe('formatDate', () => {
  it('writes a server time in the reader language, as UTC when the server gave no zone', () => {
    expect(formatDate('2026-11-26T20:53:10', 'en')).toBe(formatDate('2026-11-26T20:53:10Z', 'en'));
    expect(formatDate('2026-11-26T20:53:10Z', 'en')).toMatch(/^\d{1,2} Nov 2026, \d\d:\d\d$/);
    expect(formatDate('2026-11-26T20:53:10Z', 'zh')).toMatch(/^2026年11月\d{1,2}日 \d\d:\d\d$/);
    expect(formatDate(null, 'en')).toBe('—');
  });

  it('is the only date formatter of the web UI', () => {
    const forbidden = [/function formatDate\b/, /dateStyle/, /new Date\([^)]*\)\.toLocale(Date|Time)?String/];
    const found = offences([/\.test\.tsx?$/, /^features\/tasks\/format\.ts$/], (file, text) =>
      forbiddenLines(file, text, forbidden),
    );
    expect(found).toEqual([]);
    expect(readFileSync(join(__dirname, 'format.ts'), 'utf8')).toContain('export function formatDate');
  });
});
