import { lazy, Suspense, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DropZone } from '../../ui/DropZone';
import { useNotify } from '../../ui/toast';
import { formatBytes } from '../tasks/format';
import { formatDate } from '../tasks/format';
import { usePolling } from '../tasks/usePolling';
import { ConfirmDialog, PageState, ProgressBar } from '../tasks/widgets';
import {
  checkSelection,
  deleteDataset,
  listDatasets,
  uploadDataset,
  type DatasetPublic,
  type Upload,
  type UploadProgress,
} from './api';
import { useConfirm } from '../../ui/ConfirmDialog';
import { openDatasetInEditor } from './openInEditor';
import { asDatasetNode } from '../editor/logic/datasetNode';
import { asColumns } from '../editor/logic/tableStarter';
import { ApiError } from '../../api/client';
import { errorText } from '../../i18n/errorText';
import { useCatalog } from '../catalog/CatalogProvider';
import { countedSamples, countTitle, datasetFacts, datasetInputType } from '../inputs/registry';
import './datasets.css';

// The preview brings ECharts (the per-class bar chart): loaded when a dataset is opened.
const DatasetPreview = lazy(() => import('./DatasetPreview'));

/** A recording's options as the form starts: no label column (the CSV is a table), the node's window and stride. */
const NO_RECORDING = { label_column: '', window: '128', stride: '64' };

/** One CSV or TSV file: a table, or a recording to cut into windows when a label column is given. */
function loneCsv(files: readonly File[]): boolean {
  return files.length === 1 && /\.(csv|tsv)$/i.test(files[0]?.name ?? '');
}

/** The form fields that make a lone CSV a recording (server: inputs/sequence_upload.py); none without
 * a label column. */
function recordingOptions(files: readonly File[], recording: typeof NO_RECORDING): Record<string, string> {
  if (!loneCsv(files) || !recording.label_column.trim()) return {};
  return { label_column: recording.label_column.trim(), window: recording.window, stride: recording.stride };
}

function UploadPanel({ onUploaded }: { onUploaded: (dataset: DatasetPublic) => void }) {
  const { t } = useTranslation();
  const [files, setFiles] = useState<File[]>([]);
  const [name, setName] = useState('');
  const [recording, setRecording] = useState(NO_RECORDING);
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [error, setError] = useState<string | null>(null);
  const upload = useRef<Upload | null>(null);
  const check = checkSelection(files);
  const sending = progress !== null;

  const start = () => {
    setError(null);
    setProgress({ loaded: 0, total: files.reduce((sum, file) => sum + file.size, 0) });
    upload.current = uploadDataset(files, name, setProgress, recordingOptions(files, recording));
    upload.current.promise
      .then((dataset) => {
        setFiles([]);
        setName('');
        setRecording(NO_RECORDING);
        onUploaded(dataset);
      })
      .catch((reason: unknown) => {
        const aborted = reason instanceof ApiError && reason.status === 0 && reason.message === 'aborted';
        setError(aborted ? t('datasets.cancelled') : errorText(reason, t, 'upload'));
      })
      .finally(() => {
        setProgress(null);
        upload.current = null;
      });
  };

  const share = progress && progress.total ? progress.loaded / progress.total : 0;
  const processing = sending && share >= 1;
  return (
    <form
      className="chart-card upload"
      aria-labelledby="upload-title"
      onSubmit={(event) => {
        event.preventDefault();
        if (check !== 'empty' && !sending) start();
      }}
    >
      <h2 id="upload-title">{t('datasets.upload')}</h2>
      <p className="muted upload__help">{t('datasets.uploadHelp')}</p>
      <DropZone
        hint={t('datasets.dropHint')}
        buttonLabel={t('datasets.chooseFiles')}
        accept=".zip,.npy,.csv,.tsv,.parquet,.xlsx,.ts"
        multiple
        disabled={sending}
        inputName="dataset-files"
        onFiles={(chosen) => {
          setFiles(chosen);
          setError(null);
        }}
      />
      <div className="upload__row">
        <label className="field-stack">
          <span>{t('datasets.name')}</span>
          <input
            type="text"
            value={name}
            maxLength={200}
            placeholder={t('datasets.namePlaceholder')}
            disabled={sending}
            onChange={(event) => setName(event.target.value)}
          />
        </label>
        <div className="upload__buttons">
          <button
            type="submit"
            className="btn btn--primary"
            disabled={check === 'empty' || sending}
            data-action="upload"
          >
            {t('datasets.send')}
          </button>
          {sending && (
            <button type="button" className="btn" onClick={() => upload.current?.abort()}>
              {t('common.cancel')}
            </button>
          )}
        </div>
      </div>
      {loneCsv(files) && (
        <details className="upload__recording" data-recording>
          <summary>{t('datasets.recording.title')}</summary>
          <p className="muted">{t('datasets.recording.help')}</p>
          <div className="upload__row">
            {(['label_column', 'window', 'stride'] as const).map((field) => (
              <label key={field} className="field-stack">
                <span>{t(`datasets.recording.${field}`)}</span>
                <input
                  type={field === 'label_column' ? 'text' : 'number'}
                  min={field === 'label_column' ? undefined : 1}
                  maxLength={field === 'label_column' ? 200 : undefined}
                  value={recording[field]}
                  disabled={sending}
                  data-field={field}
                  onChange={(event) => setRecording({ ...recording, [field]: event.target.value })}
                />
              </label>
            ))}
          </div>
        </details>
      )}
      {files.length > 0 && (
        <p className="muted upload__files">
          {files.map((file) => `${file.name} (${formatBytes(file.size)})`).join(', ')}
          {check !== 'ok' && check !== 'empty' && (
            <span className="upload__hint"> — {t(`datasets.check.${check}`)}</span>
          )}
        </p>
      )}
      {sending && (
        <div className="upload__progress">
          <ProgressBar value={share} label={t('datasets.progress')} />
          <span className="muted" role="status">
            {processing
              ? t('datasets.processing')
              : t('datasets.sent', {
                  loaded: formatBytes(progress.loaded),
                  total: formatBytes(progress.total),
                  percent: Math.round(share * 100),
                })}
          </span>
        </div>
      )}
      {error && (
        <p className="wb-error" role="alert" data-upload-error>
          {error}
        </p>
      )}
    </form>
  );
}

export default function DatasetsPage() {
  const { t, i18n } = useTranslation();
  const notify = useNotify();
  const { index: catalog } = useCatalog();
  const datasets = usePolling(listDatasets, null, 'datasets');
  const [selected, setSelected] = useState<string | null>(null);
  const [toDelete, setToDelete] = useState<DatasetPublic | null>(null);
  const { confirm, dialog: question } = useConfirm();
  const list = datasets.data ?? [];
  const current = list.find((dataset) => dataset.id === selected) ?? null;

  return (
    <section className="wb-page" aria-labelledby="datasets-title">
      <header className="wb-head">
        <h1 id="datasets-title">{t('datasets.title')}</h1>
        {datasets.data && <span className="wb-head__count">{t('datasets.count', { count: list.length })}</span>}
      </header>
      <UploadPanel
        onUploaded={(dataset) => {
          notify({
            kind: 'success',
            message: t('datasets.uploaded', {
              name: dataset.name,
              counted: countedSamples(datasetInputType(dataset, catalog), dataset.count, t, i18n.language),
            }),
          });
          setSelected(dataset.id);
          datasets.refresh();
        }}
      />
      {datasets.error && (
        <p className="wb-error" role="alert">
          {t('datasets.listFailed', { message: datasets.error })}
        </p>
      )}
      {datasets.loading && !datasets.data && <PageState kind="loading" message={t('datasets.loading')} />}
      {datasets.data && list.length === 0 && <PageState kind="empty" message={t('datasets.none')} />}
      {list.length > 0 && (
        <div className="wb-card wb-card--flush">
          <table className="wb-table datasets-table">
            <thead>
              <tr>
                <th scope="col">{t('datasets.col.name')}</th>
                <th scope="col">{t('datasets.col.kind')}</th>
                <th scope="col" className="num">
                  {countTitle(
                    list.map((dataset) => datasetInputType(dataset, catalog)),
                    t,
                  )}
                </th>
                <th scope="col" className="num">
                  {t('datasets.col.classes')}
                </th>
                <th scope="col">{t('datasets.col.format')}</th>
                <th scope="col" className="num">
                  {t('datasets.col.bytes')}
                </th>
                <th scope="col">{t('datasets.col.created')}</th>
                <th scope="col" className="col-actions">
                  {t('datasets.col.actions')}
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((dataset) => (
                <tr
                  key={dataset.id}
                  data-dataset={dataset.id}
                  className={dataset.id === selected ? 'is-selected' : undefined}
                >
                  <td className="col-name">
                    <button
                      type="button"
                      className="link-btn row-link"
                      aria-expanded={dataset.id === selected}
                      onClick={() => setSelected(dataset.id === selected ? null : dataset.id)}
                    >
                      {dataset.name}
                    </button>
                  </td>
                  <td>{t(`datasets.kind.${dataset.kind}`)}</td>
                  <td
                    className="num"
                    title={countedSamples(datasetInputType(dataset, catalog), dataset.count, t, i18n.language)}
                  >
                    {dataset.count.toLocaleString(i18n.language)}
                  </td>
                  {/* A table has no classes until a train node picks its target column. */}
                  <td className="num">{dataset.columns ? '—' : dataset.classes.length}</td>
                  <td>{datasetFacts(dataset, datasetInputType(dataset, catalog), t, i18n.language)}</td>
                  <td className="num">{formatBytes(dataset.size_bytes)}</td>
                  <td className="col-date">{formatDate(dataset.created_at, i18n.language)}</td>
                  <td className="col-actions">
                    <div className="actions">
                      <button
                        type="button"
                        className="btn btn--small"
                        onClick={() => setSelected(dataset.id)}
                        aria-label={`${t('datasets.preview')}: ${dataset.name}`}
                      >
                        {t('datasets.preview')}
                      </button>
                      <button
                        type="button"
                        className="btn btn--small btn--primary"
                        data-action="use-in-editor"
                        onClick={() => {
                          const used = {
                            id: dataset.id,
                            name: dataset.name,
                            node: asDatasetNode(dataset.node),
                            columns: asColumns(dataset.columns),
                          };
                          void openDatasetInEditor(used, confirm, t, catalog).then((outcome) => {
                            if (outcome === 'used' || outcome === 'started') {
                              const done =
                                outcome === 'started' ? 'datasets.usedTableInEditor' : 'datasets.usedInEditor';
                              notify({ kind: 'success', message: t(done, { name: dataset.name }) });
                            } else if (outcome === 'failed')
                              notify({ kind: 'error', message: t('datasets.useFailed') });
                          });
                        }}
                        aria-label={`${t('datasets.useInEditor')}: ${dataset.name}`}
                      >
                        {t('datasets.useInEditor')}
                      </button>
                      <button
                        type="button"
                        className="btn btn--small btn--danger"
                        onClick={() => setToDelete(dataset)}
                        aria-label={`${t('datasets.delete')}: ${dataset.name}`}
                      >
                        {t('datasets.delete')}
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {current && (
        <Suspense fallback={<PageState kind="loading" message={t('datasets.loading')} />}>
          <DatasetPreview key={current.id} datasetId={current.id} onClose={() => setSelected(null)} />
        </Suspense>
      )}
      {toDelete && (
        <ConfirmDialog
          title={t('datasets.deleteTitle')}
          body={<p>{t('datasets.deleteBody', { name: toDelete.name })}</p>}
          confirmLabel={t('datasets.delete')}
          onClose={() => setToDelete(null)}
          onConfirm={async () => {
            await deleteDataset(toDelete.id);
            notify({ kind: 'success', message: t('datasets.deleted', { name: toDelete.name }) });
            if (selected === toDelete.id) setSelected(null);
            datasets.refresh();
          }}
        />
      )}
      {question}
    </section>
  );
}
