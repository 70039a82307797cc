import i18next, { type TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import { inputsMessages } from '../../inputs/messages';
import { sentHeading } from './sequenceCounts';

async function translator(lng: string): Promise<TFunction> {
  const i18n = i18next.createInstance();
  await i18n.init({
    resources: { en: { translation: inputsMessages.en }, zh: { translation: inputsMessages.zh } },
    lng,
    interpolation: { escapeValue: false },
  });
  return i18n.t.bind(i18n) as TFunction;
}

describe('the sent files heading', () => {
  it('counts the sequences the files hold, not only the files', async () => {
    const en = await translator('en');
    expect(sentHeading([{ answers: [1, 2, 3] }], en)).toBe('1 file · 3 sequences');
    expect(sentHeading([{ read: new Array(60) }, {}], en)).toBe('2 files · 61 sequences');
    expect(sentHeading([{ answers: [1] }], en)).toBe('1 file · 1 sequence');
    expect(sentHeading([{ answers: [1, 2, 3] }], await translator('zh'))).toBe('1 个文件 · 3 个序列');
  });
});
