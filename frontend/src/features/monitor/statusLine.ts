// The monitor's status notes: what the task does now, not the server's note of how it began.
import type { TFunction } from 'i18next';

export interface StatusFacts {
  status: string | null;
  /** The server's English note of the latest status event ("attempt 1 starting"). */
  statusMessage: string | null;
  /** The epoch the latest start event resumed from; null when it started from scratch. */
  resumedFromEpoch: number | null;
  epoch: number;
  epochs: number | null;
}

/**
 * "resumed from epoch 2" only when the trainer really resumed (its start event says so); while
 * training, the epoch it is on; otherwise the status's own note (the server's in English).
 */
export function statusNotes(facts: StatusFacts, t: TFunction, language: string): string[] {
  const notes: string[] = [];
  if (facts.resumedFromEpoch !== null) notes.push(t('monitor.resumedFrom', { epoch: facts.resumedFromEpoch }));
  if (facts.status === 'RUNNING' && facts.epoch > 0 && facts.epochs) {
    notes.push(
      `${t('monitor.statusNote.RUNNING')} · ${t('monitor.epochOf', { epoch: facts.epoch, epochs: facts.epochs })}`,
    );
  } else if (facts.statusMessage && facts.status) {
    const note =
      language === 'en' ? facts.statusMessage : t(`monitor.statusNote.${facts.status}`, { defaultValue: '' });
    if (note) notes.push(note);
  }
  return notes;
}
