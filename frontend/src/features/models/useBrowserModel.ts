import { useCallback, useEffect, useRef, useState } from 'react';
import { fetchDownload, type Manifest } from './api';
import { decodeImage } from './decode';
import { createBrowserModel, runLogits, type BrowserModel } from './onnx';
import { preprocessImage } from './preprocess';
import { softmax } from './probabilities';
import { useTranslation } from 'react-i18next';
import { errorText } from '../../i18n/errorText';

export type BrowserStatus = 'off' | 'loading' | 'ready' | 'error';

/**
 * The model's ONNX export in the browser: downloaded (the server exports it on first request) and
 * opened when `enabled` turns on. `classify` decodes a file, repeats model.json's preprocessing
 * (inverting the image as the server would, or as `invert` says) and returns the class probabilities.
 */
export function useBrowserModel(modelId: string, manifest: Manifest | null, enabled: boolean) {
  const [status, setStatus] = useState<BrowserStatus>('off');
  const { t } = useTranslation();
  // The reason itself, worded when shown: in the language of the moment.
  const [failure, setFailure] = useState<unknown>(null);
  const error = failure === null ? null : errorText(failure, t);
  const model = useRef<BrowserModel | null>(null);

  useEffect(() => {
    if (!enabled || !manifest) {
      // eslint-disable-next-line react-hooks/set-state-in-effect -- follows the ONNX session (outside React) through its states
      setStatus(enabled ? 'loading' : 'off');
      return;
    }
    if (model.current) {
      setStatus('ready');
      return;
    }
    let cancelled = false;
    setStatus('loading');
    setFailure(null);
    const exportInfo = manifest.exports?.onnx;
    fetchDownload(modelId, 'onnx')
      .then(async ({ blob }) =>
        createBrowserModel(await blob.arrayBuffer(), exportInfo?.input_name, exportInfo?.output_name),
      )
      .then((loaded) => {
        model.current = loaded;
        if (!cancelled) setStatus('ready');
      })
      .catch((reason: unknown) => {
        if (cancelled) return;
        setFailure(reason);
        setStatus('error');
      });
    return () => {
      cancelled = true;
    };
  }, [modelId, manifest, enabled]);

  useEffect(
    () => () => {
      void model.current?.session.release();
      model.current = null;
    },
    [modelId],
  );

  const classify = useCallback(
    async (file: Blob, invert: boolean | null = null): Promise<{ probabilities: number[]; inverted: boolean }> => {
      if (!model.current || !manifest) throw new Error('the browser model is not loaded');
      const image = await decodeImage(file);
      const input = preprocessImage(image.rgba, image.width, image.height, manifest.preprocessing, invert);
      return {
        probabilities: softmax(await runLogits(model.current, input.data, input.shape)),
        inverted: input.inverted,
      };
    },
    [manifest],
  );

  return { status, error, classify };
}
