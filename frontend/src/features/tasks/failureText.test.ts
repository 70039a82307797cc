import i18next, { type TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import { tasksMessages } from './messages';
import { failureText } from './failureText';

describe('failure messages', () => {
  it('say in Chinese why a task failed, from its code', async () => {
    const i18n = i18next.createInstance();
    await i18n.init({
      resources: { en: { translation: tasksMessages.en }, zh: { translation: tasksMessages.zh } },
      lng: 'zh',
    });
    const t = i18n.t.bind(i18n) as TFunction;
    const oom = { code: 'out_of_memory', message: 'CUDA out of memory at batch 3' };
    expect(failureText(oom, t, 'zh')).toBe('内存不足：请减小批大小');
    expect(failureText(oom, t, 'en')).toBe('CUDA out of memory at batch 3');
    expect(failureText({ code: 'new_code', message: 'x' }, t, 'zh')).toBe('训练失败');
  });
});
