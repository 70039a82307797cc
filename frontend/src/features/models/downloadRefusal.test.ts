import i18next, { type TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/client';
import en from '../../i18n/en';
import zh from '../../i18n/zh';
import { modelsMessages } from './messages';
import { downloadRefusal } from './downloadRefusal';

async function translator(language: string): Promise<TFunction> {
  const i18n = i18next.createInstance();
  await i18n.init({
    resources: {
      en: { translation: { ...en, ...modelsMessages.en } },
      zh: { translation: { ...zh, ...modelsMessages.zh } },
    },
    lng: language,
    interpolation: { escapeValue: false },
  });
  return i18n.t.bind(i18n) as TFunction;
}

const message = 'Sequences: an uploaded sequence set cannot be written into a script yet';
const refused = new ApiError(422, `cannot write the training script — ${message}`, {
  detail: {
    message: 'cannot write the training script',
    errors: [{ code: 'codegen_unsupported', message, node_id: 'data', field: null, details: {} }],
  },
});

describe('a refused download', () => {
  it('words a script the generator cannot write from the problem, in English and Chinese', async () => {
    expect(downloadRefusal(refused, await translator('en'), 'en')).toBe(message);
    const zhText = downloadRefusal(refused, await translator('zh'), 'zh');
    expect(zhText).toContain('data暂时不能导出为代码');
    expect(zhText).not.toContain('cannot write');
  });

  it('words any other refusal as every request error', async () => {
    const t = await translator('en');
    expect(downloadRefusal(new ApiError(404, 'no model', { detail: 'no model' }), t, 'en')).toBe(
      t('apiError.notFound'),
    );
  });
});
