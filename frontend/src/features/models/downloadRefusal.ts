// Why a download was refused, in the reader's language.
import type { TFunction } from 'i18next';
import { ApiError } from '../../api/client';
import type { GraphError } from '../../api/types';
import { errorText } from '../../i18n/errorText';
import { errorText as problemText } from '../editor/logic/errorMessage';

/** The graph problems a 422 lists (`detail.errors`), e.g. a script the generator cannot write. */
function graphProblems(reason: unknown): GraphError[] {
  if (!(reason instanceof ApiError) || reason.status !== 422) return [];
  const detail = (reason.body as { detail?: unknown } | null)?.detail;
  const errors = detail && typeof detail === 'object' ? (detail as { errors?: unknown }).errors : undefined;
  return Array.isArray(errors)
    ? errors.filter((e): e is GraphError => typeof e === 'object' && e !== null && typeof e.code === 'string')
    : [];
}

/**
 * A graph's problems worded from their codes and details as the editor words them (English keeps
 * the server's sentence, which names the node); any other refusal as every request's error.
 */
export function downloadRefusal(reason: unknown, t: TFunction, language: string): string {
  const problems = graphProblems(reason);
  if (!problems.length) return errorText(reason, t);
  return problems.map((e) => problemText(e, t, { node: e.node_id, field: null }, language)).join(' ');
}
