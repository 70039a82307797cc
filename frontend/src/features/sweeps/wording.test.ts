// In Chinese, a sweep and the palette's node search were both 搜索: a reader could not tell the
// button that starts trials from the box that filters nodes.
import { describe, expect, it } from 'vitest';
import zh from '../../i18n/zh';
import { modelsMessages } from '../models/messages';
import { sweepsMessages } from './messages';

const strings = (value: unknown): string[] =>
  typeof value === 'string' ? [value] : Object.values(value as object).flatMap(strings);

describe('Chinese sweep wording', () => {
  it('never uses the node search word', () => {
    const searchWord = zh.palette.search.replace('节点', '');
    const sweepTexts = [
      ...strings(sweepsMessages.zh),
      zh.app.nav.sweeps,
      ...strings(modelsMessages.zh).filter((text) => text.includes('试验')),
    ];
    for (const text of sweepTexts) expect(text).not.toContain(searchWord);
  });
});
