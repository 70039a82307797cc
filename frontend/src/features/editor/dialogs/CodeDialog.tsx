import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { fetchGraphCode, validateGraph } from '../../../api/endpoints';
import type { GraphSpec } from '../../../api/types';
import { Modal } from '../../../ui/Modal';

type State =
  | { kind: 'loading'; step: 'validating' | 'saving' }
  | { kind: 'code'; filename: string; code: string }
  | { kind: 'problem'; message: string };

interface Props {
  graph: GraphSpec;
  /** Saves the graph when it has unsaved changes; resolves to its server id. */
  ensureSaved: () => Promise<string>;
  onClose: () => void;
}

/** Validate first (code comes from a valid graph), save, then GET /api/graphs/{id}/code. */
export function CodeDialog({ graph, ensureSaved, onClose }: Props) {
  const { t } = useTranslation();
  const [state, setState] = useState<State>({ kind: 'loading', step: 'validating' });
  const [copied, setCopied] = useState(false);

  useEffect(() => {
    let cancelled = false;
    const run = async (): Promise<State> => {
      const result = await validateGraph(graph);
      if (!result.ok) return { kind: 'problem', message: t('code.invalid', { count: result.errors.length }) };
      if (!cancelled) setState({ kind: 'loading', step: 'saving' });
      const id = await ensureSaved();
      return { kind: 'code', ...(await fetchGraphCode(id)) };
    };
    run()
      .then((next) => !cancelled && setState(next))
      .catch((error: unknown) => {
        if (!cancelled)
          setState({
            kind: 'problem',
            message: t('code.failed', { message: (error as Error).message ?? String(error) }),
          });
      });
    return () => {
      cancelled = true;
    };
    // Run once per opening: the dialog shows the graph as it was when opened.
  }, []);

  const copy = async () => {
    if (state.kind !== 'code') return;
    try {
      await navigator.clipboard.writeText(state.code);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  const download = () => {
    if (state.kind !== 'code') return;
    const url = URL.createObjectURL(new Blob([state.code], { type: 'text/x-python' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = state.filename;
    link.click();
    window.setTimeout(() => URL.revokeObjectURL(url), 1000);
  };

  return (
    <Modal
      title={state.kind === 'code' ? `${t('code.title')} · ${state.filename}` : t('code.title')}
      onClose={onClose}
      wide
      footer={
        state.kind === 'code' ? (
          <>
            <button type="button" className="btn" onClick={() => void copy()}>
              {copied ? t('code.copied') : t('code.copy')}
            </button>
            <button type="button" className="btn btn--primary" onClick={download}>
              {t('code.download')}
            </button>
          </>
        ) : undefined
      }
    >
      {state.kind === 'loading' && (
        <p className="props__muted">{state.step === 'saving' ? t('code.saving') : t('code.loading')}</p>
      )}
      {state.kind === 'problem' && (
        <p className="dialog-error" role="alert">
          {state.message}
        </p>
      )}
      {state.kind === 'code' && <pre className="code-view">{state.code}</pre>}
    </Modal>
  );
}
