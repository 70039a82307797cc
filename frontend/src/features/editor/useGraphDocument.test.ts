import i18next from 'i18next';
import { describe, expect, it } from 'vitest';
import en from '../../i18n/en';
import zh from '../../i18n/zh';
import { replaceQuestion } from './useGraphDocument';

async function tIn(lng: 'en' | 'zh') {
  const i18n = i18next.createInstance();
  await i18n.init({ lng, resources: { en: { translation: en }, zh: { translation: zh } } });
  return i18n.t;
}

describe('replaceQuestion', () => {
  it('asks before replacing unsaved work, with a button that says what it does', async () => {
    expect(replaceQuestion(await tIn('en'))).toEqual({
      title: 'Replace the graph on the canvas?',
      body: en.toolbar.replaceConfirm,
      confirmLabel: 'Replace',
    });
    const zhQuestion = replaceQuestion(await tIn('zh'));
    expect(zhQuestion.confirmLabel).toBe('替换');
    expect(zhQuestion.title).toBe('替换画布上的图？');
  });
});
