import { useCallback, useMemo, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { navigate } from '../../app/router';
import { pathFor } from '../../app/routes';
import type { GraphSpec } from '../../api/types';
import { useNotify } from '../../ui/toast';
import { cloneTask, getTask, retryTask, stopTask, type TaskPublic } from './api';
import { taskActions } from './format';
import { canvasHasWork, openGraphInEditor } from './openInEditor';
import { ConfirmDialog } from './widgets';
import { errorText } from '../../i18n/errorText';

type Action = 'stop' | 'retry' | 'edit' | 'retrain';

export interface TaskActionHandlers {
  busy: Record<string, Action | undefined>;
  run: (task: Pick<TaskPublic, 'id' | 'name'>, action: Action) => void;
  /** The "replace the canvas?" question, when one is open. */
  dialog: ReactNode;
}

/** Stop, resume, open in the editor and retrain, with toasts for the outcome. */
export function useTaskActions(onChanged: () => void): TaskActionHandlers {
  const { t } = useTranslation();
  const notify = useNotify();
  const [busy, setBusy] = useState<Record<string, Action | undefined>>({});
  const [pending, setPending] = useState<{ graph: GraphSpec; name: string } | null>(null);

  const run = useCallback(
    (task: Pick<TaskPublic, 'id' | 'name'>, action: Action) => {
      setBusy((map) => ({ ...map, [task.id]: action }));
      const work = async () => {
        switch (action) {
          case 'stop':
            await stopTask(task.id);
            notify({ kind: 'info', message: t('tasks.stopRequested', { name: task.name }) });
            break;
          case 'retry':
            await retryTask(task.id);
            notify({ kind: 'success', message: t('tasks.resumed', { name: task.name }) });
            break;
          case 'retrain': {
            const clone = await cloneTask(task.id);
            notify({ kind: 'success', message: t('tasks.retrained', { name: clone.name }) });
            navigate(pathFor('tasks', clone.id));
            break;
          }
          case 'edit': {
            const detail = await getTask(task.id);
            if (canvasHasWork()) setPending({ graph: detail.graph, name: detail.name });
            else if (!openGraphInEditor(detail.graph, detail.name)) throw new Error(t('tasks.storageFull'));
            break;
          }
        }
      };
      work()
        .then(onChanged)
        .catch((reason: unknown) =>
          notify({ kind: 'error', title: t(`tasks.failed.${action}`), message: errorText(reason, t) }),
        )
        .finally(() => setBusy((map) => ({ ...map, [task.id]: undefined })));
    },
    [notify, onChanged, t],
  );

  const dialog = useMemo(
    () =>
      pending && (
        <ConfirmDialog
          title={t('tasks.replaceTitle')}
          body={<p>{t('tasks.replaceBody', { name: pending.name })}</p>}
          confirmLabel={t('tasks.replace')}
          danger={false}
          onClose={() => setPending(null)}
          onConfirm={async () => {
            if (!openGraphInEditor(pending.graph, pending.name)) throw new Error(t('tasks.storageFull'));
          }}
        />
      ),
    [pending, t],
  );

  return useMemo(() => ({ busy, run, dialog }), [busy, run, dialog]);
}

interface Props {
  task: { id: string; name: string; status: string; error?: { code: string } | null };
  actions: TaskActionHandlers;
  onDelete: () => void;
  compact?: boolean;
}

/** The buttons of one task; those its status does not allow are left out. */
export function TaskActions({ task, actions, onDelete, compact = false }: Props) {
  const { t } = useTranslation();
  const allowed = taskActions(task.status, task.error?.code ?? null);
  const busy = actions.busy[task.id];
  const size = compact ? ' btn--small' : '';
  const label = (key: string) => `${t(key)}: ${task.name}`;
  // A graph or data error: the fix is in the editor, so that button leads, as the primary one.
  const edit = (
    <button
      type="button"
      className={`btn${allowed.editFirst ? ' btn--primary' : ''}${size}`}
      disabled={!!busy}
      onClick={() => actions.run(task, 'edit')}
      aria-label={compact ? label('tasks.openInEditor') : undefined}
      title={t('tasks.openInEditorHelp')}
      data-action="edit"
    >
      {t('tasks.openInEditor')}
    </button>
  );
  return (
    <div className="actions" role="group" aria-label={t('tasks.actionsFor', { name: task.name })}>
      {allowed.editFirst && edit}
      {allowed.stop && (
        <button
          type="button"
          className={`btn${size}`}
          disabled={!!busy}
          onClick={() => actions.run(task, 'stop')}
          aria-label={compact ? label('tasks.stop') : undefined}
          data-action="stop"
        >
          {t('tasks.stop')}
        </button>
      )}
      {allowed.retry && (
        <button
          type="button"
          className={`btn${size}`}
          disabled={!!busy}
          onClick={() => actions.run(task, 'retry')}
          aria-label={compact ? label('tasks.resume') : undefined}
          title={t('tasks.resumeHelp')}
          data-action="retry"
        >
          {t('tasks.resume')}
        </button>
      )}
      {!allowed.editFirst && edit}
      <button
        type="button"
        className={`btn${size}`}
        disabled={!!busy}
        onClick={() => actions.run(task, 'retrain')}
        aria-label={compact ? label('tasks.retrain') : undefined}
        title={t('tasks.retrainHelp')}
        data-action="retrain"
      >
        {t('tasks.retrain')}
      </button>
      <button
        type="button"
        className={`btn btn--danger${size}`}
        disabled={!!busy}
        onClick={onDelete}
        aria-label={compact ? label('tasks.delete') : undefined}
        data-action="delete"
      >
        {t('tasks.delete')}
      </button>
    </div>
  );
}
