// Files sent for prediction one request each (so each file's answers are its own), with what the
// browser could read of them for plots.
import { useState } from 'react';
import { predictFiles, type SampleAnswer } from '../api';

export interface SentFile<T> {
  id: string;
  file: File;
  /** What the browser read of the file (sequences to plot); null when it could not. */
  read: T | null;
  /** The server's answer per sample of the file, in order. */
  answers?: SampleAnswer[];
  classes?: string[];
  failure?: unknown;
}

let nextId = 1;

export function useFilePredictions<T>(modelId: string, readFile: (file: File) => Promise<T | null>) {
  const [sent, setSent] = useState<SentFile<T>[]>([]);
  const patch = (id: string, change: Partial<SentFile<T>>) =>
    setSent((list) => list.map((item) => (item.id === id ? { ...item, ...change } : item)));

  const send = (files: File[]): string | null => {
    const added = files.map((file) => ({ id: String(nextId++), file, read: null }) as SentFile<T>);
    setSent((list) => [...added, ...list]);
    for (const item of added) {
      void readFile(item.file).then((read) => patch(item.id, { read }));
      predictFiles(modelId, [item.file])
        .then((result) => patch(item.id, { answers: result.predictions, classes: result.classes }))
        .catch((reason: unknown) => patch(item.id, { failure: reason }));
    }
    return added[0]?.id ?? null;
  };
  return { sent, send };
}
