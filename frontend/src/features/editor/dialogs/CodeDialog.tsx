import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { generateCode, validateGraph } from '../../../api/graphs';
import type { GraphSpec } from '../../../api/types';
import { Modal } from '../../../ui/Modal';
import { errorText } from '../../../i18n/errorText';

type State =
  { kind: 'loading' } | { kind: 'code'; filename: string; code: string } | { kind: 'problem'; message: string };

interface Props {
  /** The open graph as it is when the dialog opens; nothing is saved to show its code. */
  graph: GraphSpec;
  onClose: () => void;
}

/** Validate first (code comes from a valid graph), then the script of exactly this graph. */
export function CodeDialog({ graph, onClose }: Props) {
  const { t } = useTranslation();
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [copied, setCopied] = useState(false);

  useEffect(() => {
    let cancelled = false;
    const run = async (): Promise<State> => {
      const result = await validateGraph(graph);
      if (!result.ok) return { kind: 'problem', message: t('code.invalid', { count: result.errors.length }) };
      return { kind: 'code', ...(await generateCode(graph)) };
    };
    run()
      .then((next) => !cancelled && setState(next))
      .catch((error: unknown) => {
        if (!cancelled)
          setState({
            kind: 'problem',
            message: t('code.failed', { message: errorText(error, t) }),
          });
      });
    return () => {
      cancelled = true;
    };
  }, [graph, t]);

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
      {state.kind === 'loading' && <p className="props__muted">{t('code.loading')}</p>}
      {state.kind === 'problem' && (
        <p className="dialog-error" role="alert">
          {state.message}
        </p>
      )}
      {state.kind === 'code' && <pre className="code-view">{state.code}</pre>}
    </Modal>
  );
}
