// Anything a request or a component threw, as one sentence in the reader's language.
import type { TFunction } from 'i18next';
import { ApiError } from '../api/client';
import { formatBytes } from '../features/tasks/format';

/**
 * Where the error is shown: a 401 at sign-in is a wrong password, not a lost session; an upload's
 * refusal keeps the server's reason (it names the file) after a lead sentence.
 */
export type ErrorContext = 'request' | 'signIn' | 'upload';

/** The byte limit a 413's detail names ("... the limit of N bytes", "... quota of N bytes"). */
function limitOf(detail: string): { kind: 'limit' | 'quota'; bytes: number } | null {
  const match = /\b(limit|quota) of (\d+) bytes/.exec(detail);
  return match ? { kind: match[1] as 'limit' | 'quota', bytes: Number(match[2]) } : null;
}

/** Whether the server sent a sentence of its own (`{detail: "..."}`), not a proxy's page or nothing. */
function ownDetail(reason: ApiError): boolean {
  const body = reason.body as { detail?: unknown } | null;
  return typeof body === 'object' && body !== null && typeof body.detail === 'string' && body.detail.trim() !== '';
}

/**
 * The server words its errors in English for the API's users; the UI words the common ones from
 * the HTTP status in its own language, and shows the others' detail behind a translated lead.
 */
export function errorText(reason: unknown, t: TFunction, context: ErrorContext = 'request'): string {
  if (!(reason instanceof ApiError)) return reason instanceof Error ? reason.message : String(reason);
  const { status, message: detail } = reason;
  if (status === 0) return t('apiError.unreachable');
  if (status === 401) return t(context === 'signIn' ? 'apiError.signIn' : 'apiError.signedOut');
  if (status === 403) return t('apiError.forbidden');
  if (status === 404) return t('apiError.notFound');
  if (status === 413) {
    const limit = limitOf(detail);
    // A limit other than bytes (a .ts header's steps, a CSV's lines) names the file and line: shown.
    if (!limit) return ownDetail(reason) ? t('apiError.tooLargeDetail', { detail }) : t('apiError.tooLargeNoLimit');
    return t(limit.kind === 'quota' ? 'apiError.overQuota' : 'apiError.tooLarge', { limit: formatBytes(limit.bytes) });
  }
  if (status === 429) {
    return reason.retryAfterS === null
      ? t('apiError.tooManyNoWait')
      : t('apiError.tooMany', { seconds: reason.retryAfterS });
  }
  if (status >= 500) return t('apiError.server', { status });
  return t(context === 'upload' ? 'apiError.upload' : 'apiError.detail', { detail });
}
