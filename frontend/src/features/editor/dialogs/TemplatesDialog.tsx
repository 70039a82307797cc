import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { fetchTemplates, type GraphTemplate } from '../../../api/graphs';
import type { GraphSpec } from '../../../api/types';
import { Modal } from '../../../ui/Modal';
import { errorText } from '../../../i18n/errorText';
import { localizedTemplate } from '../templateTexts';

export function TemplatesDialog({ onClose, onOpen }: { onClose: () => void; onOpen: (graph: GraphSpec) => void }) {
  const { t } = useTranslation();
  const [templates, setTemplates] = useState<GraphTemplate[] | null>(null);
  // The reason itself, worded when shown: in the language of the moment.
  const [failure, setFailure] = useState<unknown>(null);
  const error = failure === null ? null : errorText(failure, t);

  useEffect(() => {
    let cancelled = false;
    fetchTemplates()
      .then((list) => !cancelled && setTemplates(list))
      .catch((reason: unknown) => !cancelled && setFailure(reason));
    return () => {
      cancelled = true;
    };
  }, []);

  return (
    <Modal title={t('templates.title')} onClose={onClose} wide>
      {error && (
        <p className="dialog-error" role="alert">
          {t('error.server', { message: error })}
        </p>
      )}
      {!error && templates === null && <p className="props__muted">{t('templates.loading')}</p>}
      {templates?.length === 0 && <p className="props__muted">{t('templates.none')}</p>}
      {templates && templates.length > 0 && (
        <>
          <p className="props__muted">{t('templates.replace')}</p>
          <ul className="templates">
            {templates.map((template) => {
              const graph = localizedTemplate(template, t);
              return (
                <li key={template.id} className="templates__card">
                  {/* Shipped templates are worded in the UI's language where a translation exists. */}
                  <h3>{graph.name}</h3>
                  <p>{graph.description}</p>
                  <div className="templates__foot">
                    <span className="pill">{t('templates.nodes', { count: template.graph.nodes.length })}</span>
                    <button type="button" className="btn btn--primary" onClick={() => onOpen(graph)}>
                      {t('templates.open')}
                    </button>
                  </div>
                </li>
              );
            })}
          </ul>
        </>
      )}
    </Modal>
  );
}
