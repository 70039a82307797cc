import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DOWNLOAD_FORMATS, fetchDownload, saveBlob, type DownloadFormat } from './api';
import { downloadRefusal } from './downloadRefusal';

/**
 * Bundle, ONNX, TorchScript and script downloads. Fetched rather than linked: the first ONNX or
 * TorchScript request exports the model (seconds), and a refusal shows its message under the
 * buttons (until the next press) rather than in a toast that is gone before it is read.
 */
export function DownloadButtons({ modelId, compact = false }: { modelId: string; compact?: boolean }) {
  const { t, i18n } = useTranslation();
  const [busy, setBusy] = useState<DownloadFormat | null>(null);
  const [refused, setRefused] = useState<{ format: DownloadFormat; reason: unknown } | null>(null);
  const download = (format: DownloadFormat) => {
    setBusy(format);
    setRefused(null);
    fetchDownload(modelId, format)
      .then(({ blob, filename }) => saveBlob(blob, filename))
      .catch((reason: unknown) => setRefused({ format, reason }))
      .finally(() => setBusy(null));
  };
  return (
    <div className="download-buttons">
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
      {refused && (
        <p className="download-buttons__refusal" role="alert" data-format={refused.format}>
          <strong>{t('models.downloadRefused', { format: t(`models.format.${refused.format}`) })}</strong>{' '}
          {downloadRefusal(refused.reason, t, i18n.language)}
        </p>
      )}
    </div>
  );
}
