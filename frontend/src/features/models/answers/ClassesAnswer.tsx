import type { AnswerSummaryProps } from './types';

const SHOWN_CLASSES = 6;

/** A classifier answers one of its classes: their count and the first few. */
export function ClassesAnswer({ model }: AnswerSummaryProps) {
  return (
    <span className="class-chips" title={model.classes.join(', ')}>
      <span className="class-count">{model.classes.length}</span>
      {model.classes.slice(0, SHOWN_CLASSES).map((name) => (
        <span key={name} className="chip">
          {name}
        </span>
      ))}
      {model.classes.length > SHOWN_CLASSES && <span className="muted">…</span>}
    </span>
  );
}
