import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNotify } from '../../ui/toast';
import { DOWNLOAD_FORMATS, fetchDownload, saveBlob, type DownloadFormat } from './api';
import { errorText } from '../../i18n/errorText';

/**
 * Bundle, ONNX, TorchScript and script downloads. Fetched rather than linked: the first ONNX or
 * TorchScript request exports the model (seconds), and a refusal should show its message.
 */
export function DownloadButtons({ modelId, compact = false }: { modelId: string; compact?: boolean }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const [busy, setBusy] = useState<DownloadFormat | null>(null);
  const download = (format: DownloadFormat) => {
    setBusy(format);
    fetchDownload(modelId, format)
      .then(({ blob, filename }) => saveBlob(blob, filename))
      .catch((reason: unknown) =>
        notify({
          kind: 'error',
          title: t('models.downloadFailed', { format: t(`models.format.${format}`) }),
          message: errorText(reason, t),
        }),
      )
      .finally(() => setBusy(null));
  };
  return (
    <div className="actions" role="group" aria-label={t('models.downloads')}>
      {DOWNLOAD_FORMATS.map((format) => (
        <button
          key={format}
          type="button"
          className={`btn${compact ? ' btn--small' : ''}`}
          onClick={() => download(format)}
          disabled={busy !== null}
          aria-busy={busy === format}
          title={t(`models.formatHelp.${format}`)}
          data-format={format}
        >
          {busy === format ? t('models.preparing') : t(`models.format.${format}`)}
        </button>
      ))}
    </div>
  );
}
