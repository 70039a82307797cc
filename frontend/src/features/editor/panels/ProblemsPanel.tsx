import { memo } from 'react';
import { useTranslation } from 'react-i18next';
import type { GraphError } from '../../../api/types';

interface Props {
  errors: GraphError[];
  titleOf: (nodeId: string) => string | null;
  onFocusNode: (nodeId: string) => void;
  stale: boolean;
  /** Open or folded; the page opens it when Train finds problems. */
  open: boolean;
  onToggle: () => void;
}

export const ProblemsPanel = memo(function ProblemsPanel({
  errors,
  titleOf,
  onFocusNode,
  stale,
  open,
  onToggle,
}: Props) {
  const { t } = useTranslation();
  return (
    <section
      className={`problems${open ? ' is-open' : ''}${stale ? ' is-stale' : ''}`}
      aria-label={t('problems.title')}
    >
      <button type="button" className="problems__toggle" aria-expanded={open} onClick={onToggle}>
        <span className="problems__chevron" aria-hidden="true">
          {open ? '▾' : '▸'}
        </span>
        {t('problems.title')}
        <span className={`problems__count${errors.length ? ' has-errors' : ''}`}>{errors.length}</span>
      </button>
      {open && (
        <ul className="problems__list">
          {errors.length === 0 && <li className="problems__none">{t('problems.none')}</li>}
          {errors.map((error, i) => {
            const title = error.node_id ? titleOf(error.node_id) : null;
            const content = (
              <>
                <span className="problems__where">{title ?? t('problems.graph')}</span>
                {error.field && <code className="problems__field">{error.field}</code>}
                <span className="problems__message">{error.message}</span>
                <code className="problems__code">{error.code}</code>
              </>
            );
            return (
              <li key={`${error.code}-${error.node_id}-${error.field}-${i}`}>
                {title && error.node_id ? (
                  <button type="button" className="problems__item" onClick={() => onFocusNode(error.node_id!)}>
                    {content}
                  </button>
                ) : (
                  <div className="problems__item">{content}</div>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
});
