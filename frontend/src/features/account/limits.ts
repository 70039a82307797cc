// The per-user limits an administrator edits: text fields to request values and back.
import type { UserPublic, UserUpdate } from './api';

export const LIMIT_FIELDS = [
  'max_running_tasks',
  'dataset_quota_bytes',
  'artifact_quota_bytes',
  'max_cpus_per_task',
  'max_gpus_per_task',
  'max_workers_per_task',
] as const;
export type LimitField = (typeof LIMIT_FIELDS)[number];
export type LimitDraft = Record<LimitField, string>;

const GIB = 1024 ** 3;
/** Quotas are typed in GiB (decimals allowed) and stored in bytes. */
const IN_GIB: ReadonlySet<LimitField> = new Set(['dataset_quota_bytes', 'artifact_quota_bytes']);
const WHOLE: ReadonlySet<LimitField> = new Set([
  'max_running_tasks',
  'dataset_quota_bytes',
  'artifact_quota_bytes',
  'max_workers_per_task',
]);
/** Limits that must be above 0 (a task needs a CPU, a run at least one worker). */
const POSITIVE: ReadonlySet<LimitField> = new Set(['max_cpus_per_task', 'max_workers_per_task']);

/** What the form shows for a user: their own limits, an empty field where the server default applies. */
export function draftOf(user: UserPublic): LimitDraft {
  const draft = {} as LimitDraft;
  for (const field of LIMIT_FIELDS) {
    const value = user[field];
    draft[field] = value == null ? '' : String(IN_GIB.has(field) ? Number((value / GIB).toFixed(3)) : value);
  }
  return draft;
}

/** The update to send, or the first field that is not a non-negative number. Empty = the server default. */
export function updateOf(draft: LimitDraft): { update: UserUpdate } | { invalid: LimitField } {
  const update: UserUpdate = {};
  for (const field of LIMIT_FIELDS) {
    const text = draft[field].trim();
    if (text === '') {
      update[field] = null;
      continue;
    }
    const number = Number(text);
    if (!Number.isFinite(number) || number < 0 || (POSITIVE.has(field) && number === 0)) {
      return { invalid: field };
    }
    const value = IN_GIB.has(field) ? number * GIB : number;
    if (WHOLE.has(field) && !IN_GIB.has(field) && !Number.isInteger(value)) return { invalid: field };
    update[field] = WHOLE.has(field) ? Math.round(value) : value;
  }
  return { update };
}
