import { memo, useId, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { blockingErrors } from '../logic/severity';
import type { ValidationState } from '../useValidation';
import { errorText } from '../../../i18n/errorText';

interface Props {
  name: string;
  onNameChange: (name: string) => void;
  validation: ValidationState;
  canUndo: boolean;
  canRedo: boolean;
  /** The version saved on the server; null = never saved there (a draft in this browser only). */
  savedVersion: number | null;
  /** Changes not saved on the server yet. */
  dirty: boolean;
  saving: boolean;
  onNew: () => void;
  onOpen: () => void;
  onSave: () => void;
  /** Save the canvas as a new graph, leaving the open one as it is. */
  onSaveAs: () => void;
  onVersions: () => void;
  onImport: () => void;
  onExport: () => void;
  onTemplates: () => void;
  onUndo: () => void;
  onRedo: () => void;
  onLayout: () => void;
  onFit: () => void;
  onCode: () => void;
  onShortcuts: () => void;
  /** Check, save and queue the graph for training (Ctrl+Enter). */
  onTrain: () => void;
  /** Train in progress: checking the graph, or the dialog is starting the task. */
  training: 'checking' | 'starting' | null;
  /** Start a sweep (the Sweep dialog); shown only while the graph has searched params. */
  onSweep?: () => void;
}

function ToolButton({
  label,
  shortcut,
  onClick,
  disabled,
  children,
  iconOnly,
  note,
  dot,
  tag,
  secondary,
}: {
  label: string;
  /** Less used: on narrow windows only its icon shows (the label stays its accessible name). */
  secondary?: boolean;
  shortcut?: string;
  /** More about the button's state, added to its tooltip and accessible name. */
  note?: string;
  /** A small mark after the label (unsaved changes). */
  dot?: boolean;
  /** A short muted text after the label (the saved version). */
  tag?: string;
  onClick: () => void;
  disabled?: boolean;
  children?: ReactNode;
  iconOnly?: boolean;
}) {
  const title = [shortcut ? `${label} (${shortcut})` : label, note].filter(Boolean).join(' · ');
  return (
    <button
      type="button"
      className={`tool${iconOnly ? ' tool--icon' : ''}`}
      onClick={onClick}
      disabled={disabled}
      title={title}
      aria-label={iconOnly || note ? title : undefined}
      aria-keyshortcuts={shortcut?.replace(/ /g, '')}
    >
      {children}
      {!iconOnly && <span className={secondary ? 'tool__label--secondary' : undefined}>{label}</span>}
      {dot && <span className="tool__dot" aria-hidden="true" />}
      {tag && <span className="tool__tag">{tag}</span>}
    </button>
  );
}

const Icon = ({ d }: { d: string }) => (
  <svg
    width="16"
    height="16"
    viewBox="0 0 24 24"
    fill="none"
    stroke="currentColor"
    strokeWidth={2}
    strokeLinecap="round"
    strokeLinejoin="round"
    aria-hidden="true"
  >
    <path d={d} />
  </svg>
);

const ICONS = {
  new: 'M14 3H6a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V9l-6-6Zm0 0v6h6M12 12v6M9 15h6',
  import: 'M12 3v12m0 0-4-4m4 4 4-4M4 17v2a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-2',
  export: 'M12 15V3m0 0L8 7m4-4 4 4M4 17v2a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-2',
  templates: 'M4 4h7v7H4zM13 4h7v7h-7zM4 13h7v7H4zM13 13h7v7h-7z',
  undo: 'M9 14 4 9l5-5M4 9h11a5 5 0 0 1 0 10h-3',
  redo: 'm15 14 5-5-5-5M20 9H9a5 5 0 0 0 0 10h3',
  layout: 'M4 5h4v4H4zM16 3h4v4h-4zM16 11h4v4h-4zM10 17h4v4h-4zM8 7h8M8 7l8 6M18 15l-6 2',
  fit: 'M4 9V4h5M20 9V4h-5M4 15v5h5M20 15v5h-5',
  code: 'm8 8-5 4 5 4M16 8l5 4-5 4M14 4l-4 16',
  open: 'M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V7Z',
  save: 'M5 3h11l4 4v12a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V5a1 1 0 0 1 1-2Zm3 0v5h7V3M7 21v-7h10v7',
  saveAs: 'M5 3h9l4 4v5M4 5v14a2 2 0 0 0 2 2h6M8 3v5h6M18 15v6M15 18h6',
  versions: 'M12 8v4l3 2M3.05 11a9 9 0 1 1 .5 4M3 4v5h5',
  train: 'M7 4.5v15a1 1 0 0 0 1.5.86l12-7.5a1 1 0 0 0 0-1.72l-12-7.5A1 1 0 0 0 7 4.5Z',
  sweep: 'M4 20V10M10 20V4M16 20v-7M22 20H2M4 10l6-6 6 9 5-5',
  help: 'M12 22a10 10 0 1 0 0-20 10 10 0 0 0 0 20ZM9.1 9a3 3 0 0 1 5.8 1c0 2-3 3-3 3M12 17h.01',
};

function StatusPill({ validation }: { validation: ValidationState }) {
  const { t } = useTranslation();
  const errors = validation.result?.errors ?? [];
  const count = blockingErrors(errors).length;
  const warnings = errors.length - count;
  let tone = 'muted';
  let text = t('status.empty');
  if (validation.status === 'pending') {
    tone = 'busy';
    text = t('status.validating');
  } else if (validation.status === 'error') {
    tone = 'warn';
    text = t('status.offline', { message: errorText(validation.error, t) });
  } else if (validation.status === 'done') {
    tone = count ? 'bad' : warnings ? 'warn' : 'good';
    text = count
      ? t('status.problems', { count })
      : warnings
        ? t('status.warnings', { count: warnings })
        : t('status.valid');
  }
  return (
    <span className={`status status--${tone}`} role="status" aria-live="polite" title={text}>
      <span className="status__dot" aria-hidden="true" />
      <span className="status__text">{text}</span>
    </span>
  );
}

/** The way out of the editor: a filled button at the end of the toolbar. */
function TrainButton({ onTrain, training }: Pick<Props, 'onTrain' | 'training'>) {
  const { t } = useTranslation();
  const label = training ? t(`train.${training}`) : t('train.button');
  return (
    <button
      type="button"
      className="btn btn--primary toolbar__train"
      onClick={onTrain}
      disabled={training !== null}
      title={`${t('train.button')} (Ctrl+Enter)`}
      aria-keyshortcuts="Control+Enter"
      data-action="train"
    >
      <svg width="14" height="14" viewBox="0 0 24 24" fill="currentColor" aria-hidden="true">
        <path d={ICONS.train} />
      </svg>
      <span>{label}</span>
    </button>
  );
}

export const Toolbar = memo(function Toolbar(props: Props) {
  const { t } = useTranslation();
  const nameId = useId();
  const saveNote =
    props.savedVersion === null
      ? t('toolbar.draftOnly')
      : props.dirty
        ? t('toolbar.unsaved')
        : t('toolbar.saved', { version: props.savedVersion });
  return (
    <div className={`toolbar${props.onSweep ? ' toolbar--sweep' : ''}`} role="toolbar" aria-label={t('toolbar.label')}>
      <label htmlFor={nameId} className="visually-hidden">
        {t('toolbar.graphName')}
      </label>
      <input
        id={nameId}
        className="toolbar__name"
        value={props.name}
        title={props.name}
        maxLength={200}
        onChange={(event) => props.onNameChange(event.target.value)}
      />
      <div className="toolbar__group">
        <ToolButton label={t('toolbar.new')} onClick={props.onNew}>
          <Icon d={ICONS.new} />
        </ToolButton>
        <ToolButton label={t('toolbar.open')} onClick={props.onOpen}>
          <Icon d={ICONS.open} />
        </ToolButton>
        <ToolButton
          label={props.saving ? t('toolbar.saving') : t('toolbar.save')}
          shortcut="Ctrl+S"
          onClick={props.onSave}
          disabled={props.saving}
          note={saveNote}
          dot={props.dirty}
          tag={props.savedVersion !== null && !props.dirty ? `v${props.savedVersion}` : undefined}
        >
          <Icon d={ICONS.save} />
        </ToolButton>
        <ToolButton
          label={t('toolbar.saveAs')}
          secondary
          onClick={props.onSaveAs}
          disabled={props.saving}
          note={t('toolbar.saveAsHelp')}
        >
          <Icon d={ICONS.saveAs} />
        </ToolButton>
        <ToolButton label={t('toolbar.import')} secondary onClick={props.onImport}>
          <Icon d={ICONS.import} />
        </ToolButton>
        <ToolButton label={t('toolbar.export')} secondary onClick={props.onExport}>
          <Icon d={ICONS.export} />
        </ToolButton>
        <ToolButton label={t('toolbar.templates')} secondary onClick={props.onTemplates}>
          <Icon d={ICONS.templates} />
        </ToolButton>
      </div>
      <div className="toolbar__group">
        <ToolButton
          label={t('toolbar.undo')}
          shortcut="Ctrl+Z"
          onClick={props.onUndo}
          disabled={!props.canUndo}
          iconOnly
        >
          <Icon d={ICONS.undo} />
        </ToolButton>
        <ToolButton
          label={t('toolbar.redo')}
          shortcut="Ctrl+Shift+Z"
          onClick={props.onRedo}
          disabled={!props.canRedo}
          iconOnly
        >
          <Icon d={ICONS.redo} />
        </ToolButton>
        <ToolButton label={t('toolbar.layout')} shortcut="L" onClick={props.onLayout}>
          <Icon d={ICONS.layout} />
        </ToolButton>
        <ToolButton label={t('toolbar.fit')} shortcut="F" onClick={props.onFit} iconOnly>
          <Icon d={ICONS.fit} />
        </ToolButton>
      </div>
      <div className="toolbar__group">
        <ToolButton label={t('toolbar.versions')} secondary onClick={props.onVersions}>
          <Icon d={ICONS.versions} />
        </ToolButton>
        <ToolButton label={t('toolbar.code')} secondary onClick={props.onCode}>
          <Icon d={ICONS.code} />
        </ToolButton>
        <ToolButton label={t('toolbar.shortcuts')} shortcut="?" onClick={props.onShortcuts} iconOnly>
          <Icon d={ICONS.help} />
        </ToolButton>
      </div>
      <div className="toolbar__status">
        <StatusPill validation={props.validation} />
      </div>
      {props.onSweep && (
        <button
          type="button"
          className="btn toolbar__sweep"
          onClick={props.onSweep}
          title={t('sweeps.dialog.buttonHelp')}
          data-action="sweep"
        >
          <Icon d={ICONS.sweep} />
          <span>{t('sweeps.dialog.button')}</span>
        </button>
      )}
      <TrainButton onTrain={props.onTrain} training={props.training} />
    </div>
  );
});
