import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { listVersions, restoreVersion, type GraphVersion, type SavedGraph } from '../../../api/graphs';
import { Modal } from '../../../ui/Modal';
import { useNotify } from '../../../ui/toast';
import type { ServerLink } from '../storage';
import { formatDate } from '../../tasks/format';
import { errorText } from '../../../i18n/errorText';

interface Props {
  link: ServerLink | null;
  name: string;
  onClose: () => void;
  onRestored: (graph: SavedGraph) => void;
}

export function VersionsDialog({ link, name, onClose, onRestored }: Props) {
  const { t, i18n } = useTranslation();
  const notify = useNotify();
  const [versions, setVersions] = useState<GraphVersion[] | null>(null);
  // The reason itself, worded when shown: in the language of the moment.
  const [failure, setFailure] = useState<unknown>(null);
  const error = failure === null ? null : errorText(failure, t);

  useEffect(() => {
    if (!link) return;
    let cancelled = false;
    listVersions(link.id)
      .then((list) => !cancelled && setVersions(list))
      .catch((reason: unknown) => !cancelled && setFailure(reason));
    return () => {
      cancelled = true;
    };
  }, [link]);

  const restore = async (version: number) => {
    if (!link) return;
    try {
      const graph = await restoreVersion(link.id, version);
      notify({ kind: 'success', message: t('versions.restored', { version, newVersion: graph.current_version }) });
      onRestored(graph);
    } catch (reason) {
      notify({ kind: 'error', message: errorText(reason, t) });
    }
  };

  return (
    <Modal title={t('versions.title', { name })} onClose={onClose}>
      {!link && <p className="props__muted">{t('versions.notSaved')}</p>}
      {error && (
        <p className="dialog-error" role="alert">
          {t('versions.failed', { message: error })}
        </p>
      )}
      {link && !error && versions === null && <p className="props__muted">{t('versions.loading')}</p>}
      {versions && (
        <ul className="listing">
          {versions.map((version) => (
            <li key={version.version}>
              <div className="listing__main">
                <strong>v{version.version}</strong>
                <span className="listing__meta">{formatDate(version.created_at, i18n.language)}</span>
              </div>
              {version.version === link?.version ? (
                <span className="pill">{t('versions.current')}</span>
              ) : (
                <button type="button" className="btn" onClick={() => void restore(version.version)}>
                  {t('versions.restore')}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </Modal>
  );
}
