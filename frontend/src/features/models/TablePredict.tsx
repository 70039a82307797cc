// Prediction with a table model: a form generated from its input columns (one row), and a CSV batch
// upload with a results table and a download. Both call POST /api/models/{id}/predict/rows.
import { useId, useMemo, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { DropZone } from '../../ui/DropZone';
import { errorText } from '../../i18n/errorText';
import { useCatalog } from '../catalog/CatalogProvider';
import { ranksClasses } from '../catalog/taskKind';
import { formatPercent } from '../tasks/format';
import { formatDate } from '../tasks/format';
import type { PredictProps } from '../inputs/types';
import { predictCsv, predictRows, saveBlob, type ColumnPublic, type ModelPublic, type RowPrediction } from './api';
import {
  delimiterFor,
  emptyForm,
  excelCsv,
  formatValue,
  formToRow,
  isValue,
  parseCsv,
  parseNumber,
  predictionCells,
  predictionHeader,
  predictionsCsv,
  type FieldProblem,
  type FormValues,
  type ParsedTable,
} from './tableForm';

/** Rows the results table shows; the download has them all. */
const SHOWN_ROWS = 100;
/** Input columns the results table shows beside the answer (all of them go into the download). */
const SHOWN_COLUMNS = 6;

/** A file's cell in the results table: numbers shortened (the download keeps them as written). */
function cellText(cell: string | undefined): string {
  if (cell === undefined) return '';
  const value = parseNumber(cell);
  return value === null ? cell : formatValue(value);
}

/** One answer: the big number of a regression model, or the class with its top scores. */
function Answer({ prediction, target }: { prediction: RowPrediction; target: string | null }) {
  const { t } = useTranslation();
  if (isValue(prediction)) {
    return (
      <div className="answer" data-answer="value">
        <span className="answer__label">{t('models.predictedOf', { target: target ?? t('models.value') })}</span>
        <span className="answer__value" data-value={prediction.value}>
          {formatValue(prediction.value)}
        </span>
      </div>
    );
  }
  return (
    <div className="answer" data-answer="class">
      <span className="answer__label">{t('models.predictedOf', { target: target ?? t('models.class') })}</span>
      <span className="answer__value" data-label={prediction.label}>
        {prediction.label}
      </span>
      <span className="muted">{formatPercent(prediction.probability, 1)}</span>
      <table className="wb-table wb-table--dense top5">
        <tbody>
          {prediction.top_k.map((score) => (
            <tr key={score.class}>
              <th scope="row">{score.class}</th>
              <td className="num">
                <span className="bar-cell" style={{ ['--share' as string]: score.probability }}>
                  {formatPercent(score.probability, 1)}
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ColumnField({
  column,
  value,
  problem,
  onChange,
}: {
  column: ColumnPublic;
  value: string;
  problem: FieldProblem | undefined;
  onChange: (value: string) => void;
}) {
  const { t } = useTranslation();
  const id = useId();
  // Only a column that had gaps in training was filled by the model (a Fill missing values node):
  // elsewhere an empty field is not a "missing value" the model knows what to do with.
  const gaps = column.missing > 0;
  const help = gaps ? t('models.columnMissingHelp', { count: column.missing }) : null;
  return (
    <div className="field" data-column={column.name}>
      <label htmlFor={id} translate="no">
        {column.name}
      </label>
      {column.kind === 'category' ? (
        <select id={id} value={value} onChange={(event) => onChange(event.target.value)}>
          <option value="">{t(gaps ? 'models.missingOption' : 'models.chooseOption')}</option>
          {(column.categories ?? []).map((category) => (
            <option key={category} value={category}>
              {category}
            </option>
          ))}
        </select>
      ) : (
        <input
          id={id}
          type="text"
          inputMode="decimal"
          autoComplete="off"
          value={value}
          placeholder={gaps ? t('models.missingPlaceholder') : t('models.numberPlaceholder')}
          aria-invalid={problem ? true : undefined}
          onChange={(event) => onChange(event.target.value)}
        />
      )}
      {problem && (
        <span className="field__error" role="alert">
          {t(`models.fieldProblem.${problem}`)}
        </span>
      )}
      {help && !problem && <span className="field__help">{help}</span>}
    </div>
  );
}

function RowForm({ model, columns }: { model: ModelPublic; columns: ColumnPublic[] }) {
  const { t } = useTranslation();
  const [values, setValues] = useState<FormValues>(() => emptyForm(columns));
  const [shown, setShown] = useState<Record<string, FieldProblem>>({});
  const [answer, setAnswer] = useState<RowPrediction | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const { row, problems } = formToRow(columns, values);
    setShown(problems);
    if (Object.keys(problems).length) return;
    setBusy(true);
    setFailure(null);
    predictRows(model.id, [row])
      .then((result) => setAnswer(result.predictions[0] ?? null))
      .catch((reason: unknown) => {
        setAnswer(null);
        setFailure(reason);
      })
      .finally(() => setBusy(false));
  };

  return (
    <div className="table-predict__row">
      <form className="chart-card table-form" onSubmit={submit} aria-busy={busy} data-form="row">
        <h2>{t('models.oneRow')}</h2>
        <p className="muted">{t('models.oneRowHelp')}</p>
        <div className="table-form__fields">
          {columns.map((column) => (
            <ColumnField
              key={column.name}
              column={column}
              value={values[column.name] ?? ''}
              problem={shown[column.name]}
              onChange={(value) => {
                setValues((old) => ({ ...old, [column.name]: value }));
                setShown(({ [column.name]: _, ...rest }) => rest);
              }}
            />
          ))}
        </div>
        <div className="actions">
          <button type="submit" className="btn btn--primary" disabled={busy} data-action="predict-row">
            {busy ? t('models.predicting') : t('models.predictRow')}
          </button>
          <button
            type="button"
            className="btn"
            onClick={() => {
              setValues(emptyForm(columns));
              setShown({});
              setAnswer(null);
              setFailure(null);
            }}
          >
            {t('models.clearForm')}
          </button>
        </div>
      </form>
      <div className="chart-card table-predict__answer" aria-live="polite">
        <h2>{t('models.answer')}</h2>
        {failure !== null && (
          <p className="wb-error" role="alert">
            {t('models.predictFailed', { message: errorText(failure, t) })}
          </p>
        )}
        {answer ? (
          <Answer prediction={answer} target={model.target ?? null} />
        ) : (
          failure === null && <p className="muted">{t('models.answerEmpty')}</p>
        )}
      </div>
    </div>
  );
}

interface Batch {
  file: File;
  table: ParsedTable | null;
  predictions: RowPrediction[] | null;
  failure: unknown;
}

function CsvBatch({ model, regression }: { model: ModelPublic; regression: boolean }) {
  const { t, i18n } = useTranslation();
  const [batch, setBatch] = useState<Batch | null>(null);
  const target = model.target ?? null;

  const run = (file: File) => {
    setBatch({ file, table: null, predictions: null, failure: null });
    // The browser reads the file too, for the results table and the download; the server's answer
    // is the prediction, and its errors name the row and column.
    const read = file
      .text()
      .then((text) => parseCsv(text, delimiterFor(file.name, text)))
      .catch(() => null);
    Promise.all([predictCsv(model.id, file), read])
      .then(([result, table]) =>
        setBatch((now) => (now?.file === file ? { file, table, predictions: result.predictions, failure: null } : now)),
      )
      .catch((reason: unknown) =>
        setBatch((now) => (now?.file === file ? { file, table: null, predictions: null, failure: reason } : now)),
      );
  };

  const view = useMemo(() => {
    if (!batch?.predictions) return null;
    const table = batch.table && batch.table.rows.length === batch.predictions.length ? batch.table : null;
    const columns = table ? table.header.slice(0, SHOWN_COLUMNS) : [];
    return { table, columns, hidden: table ? table.header.length - columns.length : 0 };
  }, [batch]);

  const download = () => {
    if (!batch?.predictions) return;
    const text = predictionsCsv(batch.table, batch.predictions, target, regression);
    const base = batch.file.name.replace(/\.(csv|tsv)$/i, '');
    saveBlob(new Blob([excelCsv(text)], { type: 'text/csv;charset=utf-8' }), `${base}-predictions.csv`);
  };

  const added = predictionHeader(target, regression);
  return (
    <div className="chart-card table-batch" data-batch={batch?.predictions ? 'done' : batch ? 'running' : 'none'}>
      <h2>{t('models.batch')}</h2>
      <DropZone
        hint={t('models.batchHint', { columns: (model.input_columns ?? []).map((c) => c.name).join(', ') })}
        buttonLabel={t('models.chooseTable')}
        accept=".csv,.tsv,text/csv,text/tab-separated-values"
        inputName="file"
        onFiles={(files) => files[0] && run(files[0])}
      />
      {batch && !batch.predictions && batch.failure === null && (
        <p className="muted">{t('models.batchRunning', { name: batch.file.name })}</p>
      )}
      {batch && batch.failure !== null && (
        <p className="wb-error" role="alert">
          {t('models.predictFailed', { message: errorText(batch.failure, t) })}
        </p>
      )}
      {batch?.predictions && view && (
        <>
          <div className="table-batch__head">
            <span data-rows={batch.predictions.length}>
              {t('models.batchDone', {
                count: batch.predictions.length,
                rows: batch.predictions.length.toLocaleString(i18n.language),
                shown: Math.min(SHOWN_ROWS, batch.predictions.length),
              })}
              {view.hidden > 0 && t('models.batchHiddenColumns', { count: view.hidden })}
            </span>
            <button type="button" className="btn btn--primary" onClick={download} data-action="download-predictions">
              {t('models.downloadPredictions')}
            </button>
          </div>
          <div className="table-batch__scroll">
            <table className="wb-table wb-table--dense" data-table="predictions">
              <thead>
                <tr>
                  <th scope="col" className="num">
                    #
                  </th>
                  {added.map((name) => (
                    <th key={name} scope="col" className="num is-answer" translate="no">
                      {name}
                    </th>
                  ))}
                  {view.columns.map((name) => (
                    <th key={name} scope="col" translate="no">
                      {name}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {batch.predictions.slice(0, SHOWN_ROWS).map((prediction, i) => (
                  <tr key={i}>
                    <td className="num muted">{i + 1}</td>
                    {predictionCells(prediction)
                      .slice(0, added.length)
                      .map((cell, c) => (
                        <td key={c} className="num is-answer">
                          {typeof cell === 'number'
                            ? c === 1
                              ? formatPercent(cell, 1)
                              : formatValue(cell)
                            : (cell ?? '')}
                        </td>
                      ))}
                    {view.columns.map((name, c) => (
                      <td key={name} className="muted">
                        {cellText(view.table?.rows[i]?.[c])}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}

/** The prediction page's body for a table model (the input type registry's,
 * features/inputs/registry.ts): its facts, a form from its columns and a CSV batch; no images, no
 * ONNX in the browser. */
export default function TablePredict({ model, trainedBy }: PredictProps) {
  const { t, i18n } = useTranslation();
  const columns = model.input_columns ?? [];
  const { index: catalog } = useCatalog();
  const regression = !ranksClasses(catalog, model.task);
  return (
    <>
      <p className="monitor__meta muted">
        {t('models.tableMeta', {
          target: model.target ?? '—',
          kind: t(`models.kind.${model.task}`),
          count: columns.length,
          created: formatDate(model.created_at, i18n.language),
        })}
        {trainedBy}
      </p>
      <div className="table-predict" data-task-kind={model.task}>
        <RowForm model={model} columns={columns} />
        <CsvBatch model={model} regression={regression} />
      </div>
    </>
  );
}
