import { memo } from 'react';
import { useTranslation } from 'react-i18next';
import type { GraphError } from '../../../api/types';
import { useCatalog } from '../../catalog/CatalogProvider';
import { errorText, fieldTitle, problemWhere } from '../logic/errorMessage';
import { blockingErrors, isWarning } from '../logic/severity';

interface Props {
  errors: GraphError[];
  titleOf: (nodeId: string) => string | null;
  /** The node type of a node id, to name a field by its title. */
  kindOf: (nodeId: string) => string | null;
  onFocusNode: (nodeId: string) => void;
  stale: boolean;
  /** Open or folded; the page opens it when Train finds problems. */
  open: boolean;
  onToggle: () => void;
  /** The table preparation validation asks for, in one click (names of the nodes it inserts). */
  preparation?: { steps: string; onApply: () => void } | null;
}

export const ProblemsPanel = memo(function ProblemsPanel({
  errors,
  titleOf,
  kindOf,
  onFocusNode,
  stale,
  open,
  onToggle,
  preparation,
}: Props) {
  const { t, i18n } = useTranslation();
  const { index: catalog } = useCatalog();
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
        <span
          className={`problems__count${blockingErrors(errors).length ? ' has-errors' : errors.length ? ' has-warnings' : ''}`}
        >
          {errors.length}
        </span>
      </button>
      {open && (
        <ul className="problems__list">
          {errors.length === 0 && <li className="problems__none">{t('problems.none')}</li>}
          {preparation && !stale && (
            <li className="problems__fix">
              <button type="button" className="btn btn--primary" onClick={preparation.onApply}>
                {t('problems.prepare', { steps: preparation.steps })}
              </button>
            </li>
          )}
          {errors.map((error, i) => {
            const title = error.node_id ? titleOf(error.node_id) : null;
            const kind = error.node_id ? (kindOf(error.node_id) ?? undefined) : undefined;
            const field = fieldTitle(catalog, kind, error.field);
            const message = errorText(error, t, { node: title, field }, i18n.language);
            const where = title ? problemWhere(message, title, error.node_id) : t('problems.graph');
            const content = (
              <>
                {where && <span className="problems__where">{where}</span>}
                {field && <span className="problems__field">{field}</span>}
                {isWarning(error) && <span className="problems__warning">{t('problems.warning')}</span>}
                <span className="problems__message" data-code={error.code} data-severity={error.severity ?? 'error'}>
                  {message}
                </span>
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
