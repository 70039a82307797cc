import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { getGraph, listGraphs, type GraphSummary, type SavedGraph } from '../../../api/graphs';
import { Modal } from '../../../ui/Modal';
import { useNotify } from '../../../ui/toast';
import { errorText } from '../../../i18n/errorText';
import { formatDate } from '../../tasks/format';

export function OpenDialog({ onClose, onOpen }: { onClose: () => void; onOpen: (graph: SavedGraph) => void }) {
  const { t, i18n } = useTranslation();
  const notify = useNotify();
  const [graphs, setGraphs] = useState<GraphSummary[] | null>(null);
  // The reason itself, worded when shown: in the language of the moment.
  const [failure, setFailure] = useState<unknown>(null);
  const error = failure === null ? null : errorText(failure, t);

  useEffect(() => {
    let cancelled = false;
    listGraphs()
      .then((list) => !cancelled && setGraphs(list))
      .catch((reason: unknown) => !cancelled && setFailure(reason));
    return () => {
      cancelled = true;
    };
  }, []);

  const open = async (id: string) => {
    try {
      onOpen(await getGraph(id));
    } catch (reason) {
      notify({ kind: 'error', message: t('open.failed', { message: errorText(reason, t) }) });
    }
  };

  return (
    <Modal title={t('open.title')} onClose={onClose} wide>
      {error && (
        <p className="dialog-error" role="alert">
          {t('open.failed', { message: error })}
        </p>
      )}
      {!error && graphs === null && <p className="props__muted">{t('open.loading')}</p>}
      {graphs?.length === 0 && <p className="props__muted">{t('open.none')}</p>}
      {graphs && graphs.length > 0 && (
        <ul className="listing">
          {graphs.map((graph) => (
            <li key={graph.id}>
              <div className="listing__main">
                <strong>{graph.name}</strong>
                <span className="listing__meta">
                  {t('open.version', { version: graph.current_version })} ·{' '}
                  {t('open.updated', { date: formatDate(graph.updated_at, i18n.language) })}
                </span>
              </div>
              <button type="button" className="btn btn--primary" onClick={() => void open(graph.id)}>
                {t('open.open')}
              </button>
            </li>
          ))}
        </ul>
      )}
    </Modal>
  );
}
