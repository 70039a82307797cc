// The preview of a dataset whose input type has none of its own (features/inputs/registry.ts): its
// samples and classes, with each class's count.
import { useTranslation } from 'react-i18next';
import type { PreviewProps } from '../../inputs/types';

export default function GenericPreview({ dataset }: PreviewProps) {
  const { t, i18n } = useTranslation();
  return (
    <>
      <dl className="facts facts--row">
        <div>
          <dt>{t('inputs.samples')}</dt>
          <dd>{dataset.count.toLocaleString(i18n.language)}</dd>
        </div>
        <div>
          <dt>{t('datasets.col.classes')}</dt>
          <dd>{dataset.classes.length}</dd>
        </div>
      </dl>
      {dataset.classes.length > 0 && (
        <table className="wb-table wb-table--dense" data-table="classes">
          <thead>
            <tr>
              <th scope="col">{t('inputs.class')}</th>
              <th scope="col" className="num">
                {t('inputs.samples')}
              </th>
            </tr>
          </thead>
          <tbody>
            {dataset.classes.map((item) => (
              <tr key={item.index}>
                <th scope="row" translate="no">
                  {item.name}
                </th>
                <td className="num">{item.count.toLocaleString(i18n.language)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
