import { useReactFlow } from '@xyflow/react';
import { memo, useId, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import type { GraphError, JsonValue, ValidationResult } from '../../../api/types';
import type { CatalogIndex } from '../../catalog/catalogIndex';
import { errorText, fieldTitle } from '../logic/errorMessage';
import { fieldApplies, fieldsFromSchema } from '../logic/schemaForm';
import { tableFacts } from '../logic/summary';
import { datasetSummary, edgeLabel } from '../../inputs/registry';
import type { DatasetSummary } from '../../../api/types';
import type { EditorNode, GraphMeta } from '../logic/types';
import { TABLE_TYPE } from '../logic/tablePrep';
import { CategoryIcon } from '../nodes/CategoryIcon';
import { DatasetSelect } from './DatasetSelect';
import { TargetSelect } from './TargetSelect';
import { FieldControl, fieldHelp } from './fields';
import { SearchControl } from './SearchControl';
import type { SearchSpec } from '../logic/search';

interface Props {
  catalog: CatalogIndex;
  selected: EditorNode[];
  errorsByNode: ReadonlyMap<string, GraphError[]>;
  validation: ValidationResult | null;
  meta: GraphMeta;
  onMetaChange: (meta: GraphMeta) => void;
  onParamChange: (nodeId: string, name: string, value: JsonValue | undefined) => void;
  onLabelChange: (nodeId: string, label: string) => void;
  onSearchChange: (nodeId: string, name: string, spec: SearchSpec | undefined) => void;
}

const fieldMatches = (error: GraphError, name: string) =>
  error.field === name || (error.field ?? '').startsWith(`${name}.`);

function NodeProperties({
  node,
  catalog,
  errors,
  shape,
  dataset,
  onParamChange,
  onLabelChange,
  onSearchChange,
}: {
  node: EditorNode;
  catalog: CatalogIndex;
  errors: GraphError[];
  shape: string | undefined;
  /** The table validation read, for a Table node's target choices. */
  dataset: DatasetSummary | null | undefined;
  onParamChange: Props['onParamChange'];
  onLabelChange: Props['onLabelChange'];
  onSearchChange: Props['onSearchChange'];
}) {
  const { t, i18n } = useTranslation();
  const baseId = useId();
  const entry = catalog.byType.get(node.data.kind);
  const allFields = useMemo(() => (entry ? fieldsFromSchema(entry.params_schema) : []), [entry]);
  // Fields that do not apply (Momentum with Adam) are hidden rather than shown as if they mattered.
  const fields = allFields.filter((field) => fieldApplies(field, allFields, node.data.params));
  const fieldNames = new Set(allFields.map((field) => field.name));
  const nodeTitle = node.data.label || entry?.title || node.data.kind;
  const describe = (error: GraphError) =>
    errorText(error, t, { node: nodeTitle, field: fieldTitle(catalog, node.data.kind, error.field) }, i18n.language);
  const general = errors.filter((error) => !error.field || ![...fieldNames].some((name) => fieldMatches(error, name)));

  return (
    <div className="props__node" data-node={node.id}>
      <header className={`props__head props__head--${node.type}`}>
        <CategoryIcon category={node.type} size={18} />
        <div>
          <h2>{entry?.title ?? node.data.kind}</h2>
          <p className="props__type">
            {t(`category.${node.type}`)} · <code translate="no">{node.data.kind}</code>
          </p>
        </div>
      </header>
      {entry?.description && <p className="props__desc">{entry.description}</p>}
      {general.length > 0 && (
        <ul className="props__errors" role="alert">
          {general.map((error, i) => (
            <li key={i}>{describe(error)}</li>
          ))}
        </ul>
      )}
      <dl className="props__facts">
        <div>
          <dt>{t('props.nodeId')}</dt>
          <dd>
            <code translate="no">{node.id}</code>
          </dd>
        </div>
        {shape && (
          <div>
            <dt>{t('props.output')}</dt>
            <dd className="props__shape">{edgeLabel(shape, t)}</dd>
          </div>
        )}
      </dl>
      <div className="field">
        <label htmlFor={`${baseId}-label`}>{t('props.nodeLabel')}</label>
        <input
          id={`${baseId}-label`}
          type="text"
          value={node.data.label ?? ''}
          placeholder={entry?.title ?? ''}
          maxLength={200}
          onChange={(event) => onLabelChange(node.id, event.target.value)}
        />
      </div>
      {fields.length === 0 && entry && <p className="props__muted">{t('props.noParams')}</p>}
      {fields.map((field) => {
        const inputId = `${baseId}-${field.name}`;
        const helpId = `${inputId}-help`;
        const fieldErrors = errors.filter((error) => fieldMatches(error, field.name));
        return (
          <div
            key={`${node.id}:${field.name}`}
            className={`field${fieldErrors.length ? ' has-error' : ''}`}
            data-field={field.name}
          >
            <label htmlFor={inputId}>
              {field.title}
              {field.required && (
                <span className="field__required" title={t('props.required')}>
                  {' '}
                  *
                </span>
              )}
            </label>
            {entry?.category === 'dataset' && field.name === 'dataset_id' ? (
              <DatasetSelect
                field={field}
                inputType={entry.outputs[0]?.types[0] ?? ''}
                value={node.data.params[field.name]}
                onChange={(value) => onParamChange(node.id, field.name, value)}
                onDataset={(dataset, previous) => {
                  // A name that came from the dataset follows it; one the user typed stays.
                  if (!node.data.label || node.data.label === previous?.name) onLabelChange(node.id, dataset.name);
                }}
                inputId={inputId}
                describedBy={helpId}
                invalid={fieldErrors.length > 0}
              />
            ) : node.data.kind === TABLE_TYPE && field.name === 'target' && dataset?.columns ? (
              <TargetSelect
                dataset={dataset}
                value={node.data.params[field.name]}
                onChange={(value) => onParamChange(node.id, field.name, value)}
                inputId={inputId}
                describedBy={helpId}
                invalid={fieldErrors.length > 0}
              />
            ) : (
              <FieldControl
                field={field}
                value={node.data.params[field.name]}
                onChange={(value) => onParamChange(node.id, field.name, value)}
                inputId={inputId}
                describedBy={helpId}
                invalid={fieldErrors.length > 0}
              />
            )}
            {fieldErrors.map((error, i) => (
              <p key={i} className="field__error" role="alert">
                {describe(error)}
              </p>
            ))}
            <p id={helpId} className="field__help">
              {fieldHelp(field, t('props.listHelp'))}
            </p>
            <SearchControl
              field={field}
              value={node.data.params[field.name]}
              spec={node.data.search?.[field.name]}
              onChange={(spec) => onSearchChange(node.id, field.name, spec)}
            />
          </div>
        );
      })}
    </div>
  );
}

/** What validation read from the dataset: a table's rows and columns, else its input type's line. */
function DatasetFacts({ dataset }: { dataset: DatasetSummary }) {
  const { t, i18n } = useTranslation();
  const table = tableFacts(dataset);
  if (!table) {
    return (
      <div className="props__dataset" data-dataset={dataset.input_type}>
        <h3>{t('props.dataset')}</h3>
        <p>{datasetSummary(dataset, t, i18n.language)}</p>
      </div>
    );
  }
  return (
    <div className="props__dataset" data-dataset="table">
      <h3>{t('props.dataset')}</h3>
      <p>
        {t('props.tableSummary', {
          rows: table.rows.toLocaleString(i18n.language),
          columns: table.columns,
          numbers: table.numbers,
          categories: table.categories,
        })}
      </p>
      {table.target && (
        <p>
          {table.classes > 0
            ? t('props.tableTargetClasses', { target: table.target, classes: table.classes })
            : t('props.tableTarget', { target: table.target })}
        </p>
      )}
      {table.missingTargets > 0 && (
        <p data-missing-targets={table.missingTargets}>
          {t('props.tableMissingTargets', { count: table.missingTargets, rows: table.missingTargetRows })}
        </p>
      )}
      {table.withMissing > 0 && <p>{t('props.tableMissing', { count: table.withMissing })}</p>}
      <details className="props__columns">
        <summary>{t('props.tableColumns', { count: table.columns })}</summary>
        <ul>
          {(dataset.columns ?? []).map((column) => (
            <li key={column.name}>
              <code translate="no">{column.name}</code>{' '}
              <span className="props__muted">
                {column.kind === 'category'
                  ? t('props.columnCategory', { count: column.categories.length })
                  : t('props.columnNumber')}
                {column.missing > 0 && ` · ${t('props.columnMissing', { count: column.missing })}`}
              </span>
            </li>
          ))}
        </ul>
      </details>
    </div>
  );
}

function GraphProperties({ meta, onMetaChange, validation }: Pick<Props, 'meta' | 'onMetaChange' | 'validation'>) {
  const { t } = useTranslation();
  const baseId = useId();
  const dataset = validation?.dataset;
  return (
    <div className="props__graph">
      <h2>{t('props.graph')}</h2>
      <div className="field">
        <label htmlFor={`${baseId}-desc`}>{t('props.description')}</label>
        <textarea
          id={`${baseId}-desc`}
          rows={4}
          maxLength={5000}
          value={meta.description}
          onChange={(event) => onMetaChange({ ...meta, description: event.target.value })}
        />
      </div>
      {dataset && <DatasetFacts dataset={dataset} />}
      <p className="props__muted">{t('props.none')}</p>
    </div>
  );
}

export const PropertyPanel = memo(function PropertyPanel(props: Props) {
  const { t } = useTranslation();
  const { deleteElements } = useReactFlow();
  const { selected, catalog, errorsByNode, validation } = props;
  let body;
  if (selected.length === 1) {
    const node = selected[0]!;
    body = (
      <NodeProperties
        key={node.id}
        node={node}
        catalog={catalog}
        errors={errorsByNode.get(node.id) ?? []}
        shape={validation?.shapes[node.id]}
        dataset={validation?.dataset}
        onParamChange={props.onParamChange}
        onLabelChange={props.onLabelChange}
        onSearchChange={props.onSearchChange}
      />
    );
  } else if (selected.length > 1) {
    body = (
      <div className="props__multi">
        <h2>{t('props.multi', { count: selected.length })}</h2>
        <button
          type="button"
          className="btn btn--danger"
          onClick={() => void deleteElements({ nodes: selected.map((n) => ({ id: n.id })) })}
        >
          {t('props.deleteSelected')}
        </button>
      </div>
    );
  } else {
    body = <GraphProperties meta={props.meta} onMetaChange={props.onMetaChange} validation={validation} />;
  }
  return (
    <aside className="props" aria-label={t('props.title')}>
      {body}
    </aside>
  );
});
