// A table dataset's preview (the input type registry's, features/inputs/registry.ts).
import { useTranslation } from 'react-i18next';
import type { DatasetDetail } from '../api';
import { categorySummary } from '../columns';
import type { PreviewProps } from '../../inputs/types';

/** A column's first values, and how many it holds in all when that is more than are shown. */
function CategoryCell({ column }: { column: NonNullable<DatasetDetail['columns']>[number] }) {
  const { t, i18n } = useTranslation();
  const { shown, count, more } = categorySummary(column);
  return (
    <td className="muted" data-category-count={count}>
      <span translate="no">{shown.join(', ')}</span>
      {more > 0 && ` … ${t('datasets.categoryCount', { count, formatted: count.toLocaleString(i18n.language) })}`}
    </td>
  );
}

/** A table dataset: its rows and its columns (kind, missing values, categories). */
export default function TablePreview({ dataset }: PreviewProps) {
  const { t, i18n } = useTranslation();
  const columns = dataset.columns ?? [];
  return (
    <>
      <dl className="facts facts--row">
        <div>
          <dt>{t('datasets.rows')}</dt>
          <dd>{dataset.count.toLocaleString(i18n.language)}</dd>
        </div>
        <div>
          <dt>{t('datasets.columns')}</dt>
          <dd>{columns.length}</dd>
        </div>
      </dl>
      <div className="per-class__scroll">
        <table className="wb-table wb-table--dense" data-table="columns">
          <thead>
            <tr>
              <th scope="col">{t('datasets.col.name')}</th>
              <th scope="col">{t('datasets.col.kind')}</th>
              <th scope="col" className="num">
                {t('datasets.missing')}
              </th>
              <th scope="col">{t('datasets.categories')}</th>
            </tr>
          </thead>
          <tbody>
            {columns.map((column) => (
              <tr key={column.name}>
                <th scope="row" translate="no">
                  {column.name}
                </th>
                <td>{t(`datasets.columnKind.${column.kind}`)}</td>
                <td className="num">{column.missing}</td>
                <CategoryCell column={column} />
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
