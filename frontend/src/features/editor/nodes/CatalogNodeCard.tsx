import { Handle, NodeToolbar, Position, useNodeConnections, type NodeProps } from '@xyflow/react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { GraphError, PortSpec } from '../../../api/types';
import { useEditorView } from '../EditorContext';
import { errorText, fieldTitle } from '../logic/errorMessage';
import { blockingErrors } from '../logic/severity';
import { summarizeParams } from '../logic/summary';
import type { EditorNode, NodeCategory } from '../logic/types';
import { ALONE_PORT_TEXT_COLUMNS, inputPortText, PORT_TEXT_COLUMNS, shownOnCard } from './cardText';
import { CategoryIcon } from './CategoryIcon';

/** Handles sit on fixed rows under the header, so each lines up with its port label. */
const HEADER_HEIGHT = 34;
const PORT_ROW_HEIGHT = 22;
const portTop = (index: number) => HEADER_HEIGHT + 4 + PORT_ROW_HEIGHT * index + PORT_ROW_HEIGHT / 2;

/** "×N" on a port that takes several inputs (its own component: one store subscription each). */
function ConnectionCount({ port }: { port: PortSpec }) {
  const connections = useNodeConnections({ handleType: 'target', handleId: port.name });
  return <>×{connections.length}</>;
}

/** `alone`: no output label shares the port's row, so its label may take the card's width. */
function InputPort({ port, index, alone }: { port: PortSpec; index: number; alone: boolean }) {
  const { t } = useTranslation();
  const typeName = (type: string) => t(`node.portType.${type}`, { defaultValue: type });
  const help = `${port.label}: ${t('node.accepts', { types: port.types.map(typeName).join(' | ') })}${port.multiple ? ` (${t('node.multiple')})` : ''}`;
  const room = alone ? ALONE_PORT_TEXT_COLUMNS : PORT_TEXT_COLUMNS;
  const types = inputPortText(port.types, typeName, port.label, t('node.anyInput'), room);
  return (
    <>
      <Handle
        type="target"
        position={Position.Left}
        id={port.name}
        className={`dhandle dhandle--in${port.multiple ? ' dhandle--multi' : ''}`}
        style={{ top: portTop(index) }}
        title={help}
        aria-label={help}
      />
      <span
        className={`dnode__port dnode__port--in${alone ? ' dnode__port--alone' : ''}`}
        style={{ top: portTop(index) }}
        title={help}
      >
        {port.multiple ? (
          <>
            {types} <ConnectionCount port={port} />
          </>
        ) : (
          types
        )}
      </span>
    </>
  );
}

function OutputPort({ port, index }: { port: PortSpec; index: number }) {
  const { t } = useTranslation();
  const type = port.types[0] ?? '';
  const typeName = t(`node.portType.${type}`, { defaultValue: type });
  const help = `${port.label}: ${t('node.outputs', { type: typeName })}`;
  return (
    <>
      <Handle
        type="source"
        position={Position.Right}
        id={port.name}
        className={`dhandle dhandle--out dhandle--${type}`}
        style={{ top: portTop(index) }}
        title={help}
        aria-label={help}
      />
      <span className="dnode__port dnode__port--out" style={{ top: portTop(index) }} title={help}>
        {typeName}
      </span>
    </>
  );
}

/** Room the tip needs above the badge; with less, it opens below the node instead. */
const TIP_ROOM_PX = 150;

function ErrorBadge({ errors, kind, title }: { errors: GraphError[]; kind: string; title: string }) {
  const { t, i18n } = useTranslation();
  const catalog = useEditorView((view) => view.catalog);
  const messages = errors.map((error) =>
    errorText(error, t, { node: title, field: fieldTitle(catalog, kind, error.field) }, i18n.language),
  );
  const [open, setOpen] = useState(false);
  const [side, setSide] = useState<Position>(Position.Top);
  const show = (event: { currentTarget: HTMLElement }) => {
    const badge = event.currentTarget.getBoundingClientRect();
    const pane = event.currentTarget.closest('.react-flow')?.getBoundingClientRect();
    setSide(pane && badge.top - pane.top < TIP_ROOM_PX ? Position.Bottom : Position.Top);
    setOpen(true);
  };
  // A node with only warnings wears an amber badge: the graph stays valid.
  const warningsOnly = blockingErrors(errors).length === 0;
  const label = t(warningsOnly ? 'node.warnings' : 'node.errors', { count: errors.length });
  return (
    <>
      <span
        className={`dnode__badge${warningsOnly ? ' dnode__badge--warning' : ''}`}
        role="img"
        tabIndex={0}
        aria-label={`${label}: ${messages.join('; ')}`}
        onMouseEnter={show}
        onMouseLeave={() => setOpen(false)}
        onFocus={show}
        onBlur={() => setOpen(false)}
      >
        {errors.length}
      </span>
      <NodeToolbar isVisible={open} position={side} className="dnode__tip">
        <strong>{label}</strong>
        <ul>
          {messages.map((message, i) => (
            <li key={i}>{message}</li>
          ))}
        </ul>
      </NodeToolbar>
    </>
  );
}

const NO_ERRORS: GraphError[] = [];

/** One card for every category; the category gives the colour and icon (see nodeTypes.ts). */
export function CatalogNodeCard({ id, data, selected, type }: NodeProps<EditorNode>) {
  const { t } = useTranslation();
  const catalog = useEditorView((view) => view.catalog);
  // Only this node's errors: a validation answer re-renders the nodes whose errors changed.
  const errors = useEditorView((view) => view.errorsByNode.get(id)) ?? NO_ERRORS;
  const blocking = blockingErrors(errors).length;
  const state = blocking ? ' has-errors' : errors.length ? ' has-warnings' : '';
  const category: NodeCategory = type;
  const entry = catalog.byType.get(data.kind);
  const summary = entry ? shownOnCard(summarizeParams(data.params, entry.params_schema, 4)).slice(0, 3) : [];
  const title = data.label || entry?.title || data.kind;
  const portRows = Math.max(entry?.inputs.length ?? 0, entry?.outputs.length ?? 0, 1);

  return (
    <div
      className={`dnode dnode--${category}${state}${selected ? ' is-selected' : ''}`}
      data-kind={data.kind}
      data-errors={blocking}
      data-warnings={errors.length - blocking}
    >
      <header className="dnode__header" style={{ height: HEADER_HEIGHT }}>
        <span className="dnode__icon">
          <CategoryIcon category={category} />
        </span>
        <span className="dnode__title" title={entry?.description ?? data.kind}>
          {title}
        </span>
        {entry?.random && <span className="dnode__tag">{t('palette.random')}</span>}
        {data.search && (
          <span
            className="dnode__tag dnode__tag--search"
            data-searched={Object.keys(data.search).length}
            title={t('sweeps.search.badgeHelp', { count: Object.keys(data.search).length })}
          >
            {t('sweeps.search.badge')}
          </span>
        )}
        {errors.length > 0 && <ErrorBadge errors={errors} kind={data.kind} title={title} />}
      </header>
      <div className="dnode__ports" style={{ height: portRows * PORT_ROW_HEIGHT + 8 }}>
        {entry?.inputs.map((port, index) => (
          <InputPort key={port.name} port={port} index={index} alone={index >= (entry?.outputs.length ?? 0)} />
        ))}
        {entry?.outputs.map((port, index) => (
          <OutputPort key={port.name} port={port} index={index} />
        ))}
      </div>
      {!entry && <div className="dnode__unknown">{t('node.unknownType', { type: data.kind })}</div>}
      {data.label && entry && <div className="dnode__subtitle">{entry.title}</div>}
      {summary.length > 0 && (
        <dl className="dnode__params">
          {summary.map((row) => (
            <div key={row.name} className="dnode__param">
              <dt>{row.label}</dt>
              <dd>{row.value}</dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  );
}
