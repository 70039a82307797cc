// The dataset_id of a dataset node (uploaded images, a Table node reading an uploaded table, uploaded
// sequences): one of the user's datasets of the node's input type (GET /api/datasets), chosen by name
// rather than typed as an id.
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from '../../../app/router';
import { listDatasets, type DatasetPublic } from '../../datasets/api';
import type { FieldProps } from './fields';
import { errorText } from '../../../i18n/errorText';
import { useCatalog } from '../../catalog/CatalogProvider';
import { datasetInputType, datasetNote } from '../../inputs/registry';

type State = { kind: 'loading' } | { kind: 'ready'; list: DatasetPublic[] } | { kind: 'error'; reason: unknown };

interface Props extends FieldProps {
  /** Called with the chosen dataset and the one it replaces, so the node can be named after it. */
  onDataset?: (dataset: DatasetPublic, previous: DatasetPublic | undefined) => void;
  /** The input type of the datasets the node reads: its output port's type. */
  inputType: string;
}

export function DatasetSelect({ value, onChange, onDataset, inputType, inputId, describedBy, invalid }: Props) {
  const { t, i18n } = useTranslation();
  const { index: catalog } = useCatalog();
  const [state, setState] = useState<State>({ kind: 'loading' });

  useEffect(() => {
    let cancelled = false;
    listDatasets()
      .then((list) => !cancelled && setState({ kind: 'ready', list }))
      .catch((error: unknown) => !cancelled && setState({ kind: 'error', reason: error }));
    return () => {
      cancelled = true;
    };
  }, []);

  const list =
    state.kind === 'ready' ? state.list.filter((dataset) => datasetInputType(dataset, catalog) === inputType) : [];
  const current = typeof value === 'string' ? value : '';
  const chosen = list.find((dataset) => dataset.id === current);
  const known = chosen !== undefined;
  return (
    <div className="field__dataset">
      <select
        id={inputId}
        aria-describedby={describedBy}
        aria-invalid={invalid}
        aria-busy={state.kind === 'loading'}
        value={current}
        data-input="dataset-select"
        onChange={(event) => {
          const dataset = list.find((item) => item.id === event.target.value);
          const previous = list.find((item) => item.id === current);
          onChange(event.target.value || undefined);
          if (dataset) onDataset?.(dataset, previous);
        }}
      >
        <option value="">{state.kind === 'loading' ? t('props.datasetsLoading') : t('props.datasetChoose')}</option>
        {list.map((dataset) => (
          <option key={dataset.id} value={dataset.id}>
            {dataset.name}
          </option>
        ))}
        {current && !known && state.kind !== 'loading' && (
          <option value={current}>{t('props.datasetMissing', { id: current })}</option>
        )}
      </select>
      {state.kind === 'error' && (
        <span className="field__local-error" role="alert">
          {t('props.datasetsFailed', { message: errorText(state.reason, t) })}
        </span>
      )}
      {chosen && (
        <span className="field__note" data-dataset-summary>
          {datasetNote(chosen, inputType, t, i18n.language)}
        </span>
      )}
      {state.kind === 'ready' && list.length === 0 && <span className="field__note">{t('props.datasetsNone')}</span>}
      <Link href="/datasets" className="field__link">
        {t('props.datasetsManage')}
      </Link>
    </div>
  );
}
