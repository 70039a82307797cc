// The prediction page's count of what was sent: files and the sequences they hold.
import type { TFunction } from 'i18next';

/** What the page knows of a sent file: its answers once back, the series the browser read of it. */
export interface SentCounts {
  answers?: readonly unknown[] | null;
  read?: readonly unknown[] | null;
}

/** The sequences a file holds, as its chips show them: answered, else read, else one awaited. */
export function sequencesOf(file: SentCounts): number {
  return file.answers?.length ?? file.read?.length ?? 1;
}

/** "1 file · 3 sequences": a .ts file holds many sequences, each with its own answer. */
export function sentHeading(files: readonly SentCounts[], t: TFunction): string {
  const sequences = files.reduce((total, file) => total + sequencesOf(file), 0);
  return `${t('inputs.files', { count: files.length })} · ${t('inputs.answers', { count: sequences })}`;
}
