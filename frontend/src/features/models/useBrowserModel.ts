import { useCallback, useEffect, useRef, useState } from 'react';
import { fetchDownload, type Manifest } from './api';
import { decodeImage } from './decode';
import { createBrowserModel, runLogits, type BrowserModel } from './onnx';
import { preprocessImage } from './preprocess';
import { softmax } from './probabilities';

export type BrowserStatus = 'off' | 'loading' | 'ready' | 'error';

/**
 * The model's ONNX export in the browser: downloaded (the server exports it on first request) and
 * opened when `enabled` turns on. `classify` decodes a file, repeats model.json's preprocessing and
 * returns the class probabilities.
 */
export function useBrowserModel(modelId: string, manifest: Manifest | null, enabled: boolean) {
  const [status, setStatus] = useState<BrowserStatus>('off');
  const [error, setError] = useState<string | null>(null);
  const model = useRef<BrowserModel | null>(null);

  useEffect(() => {
    if (!enabled || !manifest) {
      setStatus(enabled ? 'loading' : 'off');
      return;
    }
    if (model.current) {
      setStatus('ready');
      return;
    }
    let cancelled = false;
    setStatus('loading');
    setError(null);
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
        setError(reason instanceof Error ? reason.message : String(reason));
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
    async (file: Blob): Promise<number[]> => {
      if (!model.current || !manifest) throw new Error('the browser model is not loaded');
      const image = await decodeImage(file);
      const input = preprocessImage(image.rgba, image.width, image.height, manifest.preprocessing);
      return softmax(await runLogits(model.current, input.data, input.shape));
    },
    [manifest],
  );

  return { status, error, classify };
}
