// Why a queued task has not started, in the reader's language.
import type { TFunction } from 'i18next';

export interface QueuedReasonLike {
  code: string;
  details: Record<string, number>;
}

/** Worded from the reason's code and figures in every language (the server's English message is for
 * the API and logs); a code this page does not know yet reads as plain waiting. */
export function queuedText(reason: QueuedReasonLike, t: TFunction): string {
  return t(`tasks.queued.${reason.code}`, { ...reason.details, defaultValue: t('tasks.queued.unknown') });
}
