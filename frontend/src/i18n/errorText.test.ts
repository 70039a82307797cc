import i18next, { type TFunction } from 'i18next';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiError, unwrap } from '../api/client';
import en from './en';
import { errorText as errorTextIn, type ErrorContext } from './errorText';
import zhMessages from './zh';

const i18n = i18next.createInstance();
beforeAll(() =>
  i18n.init({
    resources: { en: { translation: en }, zh: { translation: zhMessages } },
    lng: 'en',
    interpolation: { escapeValue: false },
  }),
);
const errorText = (reason: unknown, context?: ErrorContext) =>
  errorTextIn(reason, i18n.t.bind(i18n) as TFunction, context);

const refused = (status: number, detail: string, headers: Record<string, string> = {}) => {
  try {
    unwrap({ error: { detail }, response: new Response(null, { status, headers }) });
  } catch (error) {
    return error;
  }
  throw new Error('unwrap accepted an error answer');
};

describe('API errors in the reader’s language', () => {
  it('say a wrong password, a missing object, a size limit and a wait in Chinese', async () => {
    await i18n.changeLanguage('zh');
    expect(errorText(refused(401, 'wrong username or password'), 'signIn')).toBe('用户名或密码错误。');
    expect(errorText(refused(404, "no task '3e38'"))).toBe('未找到：它可能已被删除，或属于另一个账户。');
    expect(errorText(refused(413, 'the upload is larger than the limit of 1073741824 bytes'), 'upload')).toBe(
      '太大：上限为 1.0 GiB。',
    );
    expect(errorText(refused(429, 'too many failed sign-ins', { 'Retry-After': '12' }), 'signIn')).toBe(
      '尝试次数过多：请在 12 秒后重试。',
    );
    expect(errorText(refused(500, 'Internal Server Error'))).toBe('服务器出错（HTTP 500）：请重试，或联系管理员。');
    expect(errorText(new ApiError(0, 'The server cannot be reached (Failed to fetch)', null))).toBe(
      '无法连接服务器：请确认服务器正在运行，然后重试。',
    );
  });

  it('show a 413 that names the file and line, and the generic text only for one without a sentence', async () => {
    const reason = 'huge.ts, line 3: 10,000,000,000 time steps per sequence is over the limit of 100,000';
    await i18n.changeLanguage('en');
    expect(errorText(refused(413, reason), 'upload')).toBe(`Too large: ${reason}`);
    const bare = new ApiError(413, 'HTTP 413', '<html>413 Request Entity Too Large</html>');
    expect(errorText(bare, 'upload')).toBe('Too large for the server.');
    await i18n.changeLanguage('zh');
    expect(errorText(refused(413, reason), 'upload')).toBe(`太大：${reason}`);
    expect(errorText(bare, 'upload')).toBe('太大，超出了服务器的上限。');
  });

  it('keep an upload refusal’s reason, which names the file, after a translated lead', async () => {
    const reason = "zip member '../../evil/a.png' points outside the archive";
    await i18n.changeLanguage('zh');
    expect(errorText(refused(400, reason), 'upload')).toBe(`上传被拒绝：${reason}`);
    await i18n.changeLanguage('en');
    expect(errorText(refused(400, reason), 'upload')).toBe(`The upload was refused: ${reason}`);
  });

  it('word English from the status too, and keep other errors’ own text', async () => {
    await i18n.changeLanguage('en');
    expect(errorText(refused(404, 'model 6246 not found'))).toBe(
      'Not found: it may have been deleted, or it belongs to another account.',
    );
    expect(errorText(refused(401, 'not signed in'))).toBe('You are signed out: sign in again.');
    expect(errorText(refused(409, 'that user name is taken'))).toBe('that user name is taken');
    expect(errorText(new Error('The browser refused to store the graph'))).toBe(
      'The browser refused to store the graph',
    );
  });
});
