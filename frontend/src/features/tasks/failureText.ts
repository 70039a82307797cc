// Why a task failed, in the reader's language.
import type { TFunction } from 'i18next';

/** English shows the server's message (it names the node and the cause); others say it from the code. */
export function failureText(error: { code: string; message: string }, t: TFunction, language: string): string {
  if (language === 'en') return error.message;
  return t(`tasks.failure.${error.code}`, { defaultValue: t('tasks.failure.unknown') });
}
