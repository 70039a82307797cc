// The prediction page's body for an image model (the input type registry's,
// features/inputs/registry.ts): uploads and a drawing pad, the server's class probabilities or
// value, and for classifiers the ONNX model run in the browser beside it.
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DropZone } from '../../../ui/DropZone';
import { useNotify } from '../../../ui/toast';
import { formatDate } from '../../tasks/format';
import { PageState } from '../../tasks/widgets';
import { getManifest, predict, type InvertChoice, type Manifest } from '../api';
import { PredictionView, type InputItem } from '../PredictionView';
import { sketchable, strokesAreDark } from '../sketch';
import { SketchPad } from '../SketchPad';
import { formatValue } from '../tableForm';
import { useBrowserModel } from '../useBrowserModel';
import { errorText } from '../../../i18n/errorText';
import { useCatalog } from '../../catalog/CatalogProvider';
import { ranksClasses } from '../../catalog/taskKind';
import type { PredictProps } from '../../inputs/types';

const MAX_IMAGES = 64;
let nextId = 1;

const invertFlag = (choice: InvertChoice): boolean | null => (choice === 'auto' ? null : choice === 'yes');

export default function ImagePredict({ model, trainedBy }: PredictProps) {
  const { t, i18n } = useTranslation();
  const notify = useNotify();
  const { index: catalog } = useCatalog();
  const [manifest, setManifest] = useState<Manifest | null>(null);
  const [manifestError, setManifestError] = useState<unknown>(null);
  const [items, setItems] = useState<InputItem[]>([]);
  const [selected, setSelected] = useState<string | null>(null);
  const [browserOn, setBrowserOn] = useState(false);
  const browser = useBrowserModel(model.id, manifest, browserOn);

  useEffect(() => {
    getManifest(model.id)
      .then(setManifest)
      .catch((reason: unknown) => setManifestError(reason));
  }, [model.id]);
  // Object URLs of the thumbnails go with the page.
  const urls = useRef<string[]>([]);
  useEffect(() => () => urls.current.forEach((url) => URL.revokeObjectURL(url)), []);

  // A result is kept only for the revision of the item it was asked for (the invert choice changes it).
  const update = (id: string, revision: number, patch: Partial<InputItem>) =>
    setItems((list) =>
      list.map((item) => (item.id === id && item.revision === revision ? { ...item, ...patch } : item)),
    );

  const newItem = (file: File, source: InputItem['source'], live = false): InputItem => {
    const url = URL.createObjectURL(file);
    urls.current.push(url);
    return { id: String(nextId++), name: file.name, file, url, source, live, invert: 'auto', revision: 0 };
  };

  /** Server predictions for items that share one invert choice, in one request. */
  const askServer = (batch: InputItem[]) => {
    const choice = batch[0]?.invert ?? 'auto';
    predict(
      model.id,
      batch.map((item) => item.file),
      5,
      choice,
    )
      .then((answer) =>
        batch.forEach((item, i) => {
          const found = answer.predictions[i];
          // A regression model answers one number per image, a classifier class probabilities.
          if (found && 'value' in found)
            update(item.id, item.revision, { value: found.value, inverted: found.inverted });
          else update(item.id, item.revision, { server: found?.probabilities, inverted: found?.inverted });
        }),
      )
      .catch((reason: unknown) => batch.forEach((item) => update(item.id, item.revision, { serverError: reason })));
  };

  const addFiles = (files: File[], source: InputItem['source']) => {
    const images = files.filter(
      (file) => file.type.startsWith('image/') || /\.(png|jpe?g|gif|bmp|webp|tiff?)$/i.test(file.name),
    );
    if (images.length < files.length) notify({ kind: 'error', message: t('models.notImages') });
    if (!images.length) return;
    const batch = images.slice(0, MAX_IMAGES).map((file) => newItem(file, source));
    setItems((list) => [...batch, ...list]);
    setSelected(batch[0]!.id);
    askServer(batch);
  };

  // The drawing as it is now, predicted while the user draws: in the browser when the ONNX model
  // is loaded (no server round trip per stroke), else on the server. One live item, replaced.
  const browserReady = browserOn && browser.status === 'ready';
  const liveSketch = (file: File | null) => {
    const item = file ? newItem(file, 'sketch', true) : null;
    setItems((list) => [...(item ? [item] : []), ...list.filter((old) => !old.live)]);
    if (!item) return;
    setSelected(item.id);
    if (!browserReady) askServer([item]);
  };

  const setInvert = (target: InputItem, invert: InvertChoice) => {
    const next: InputItem = {
      ...target,
      invert,
      revision: target.revision + 1,
      server: undefined,
      serverError: undefined,
      browser: undefined,
      browserError: undefined,
      inverted: undefined,
    };
    setItems((list) => list.map((item) => (item.id === target.id ? next : item)));
    if (!(next.live && browserReady)) askServer([next]);
  };

  // Browser inference for every input that has none yet, once the ONNX model is ready.
  const { classify } = browser;
  const running = useRef(new Set<string>());
  useEffect(() => {
    if (!browserOn || browser.status !== 'ready') return;
    for (const item of items) {
      if (item.browser || item.browserError !== undefined) continue;
      const key = `${item.id}/${item.revision}`;
      if (running.current.has(key)) continue;
      running.current.add(key);
      classify(item.file, invertFlag(item.invert))
        .then(({ probabilities, inverted }) => update(item.id, item.revision, { browser: probabilities, inverted }))
        .catch((reason: unknown) => update(item.id, item.revision, { browserError: reason }))
        .finally(() => running.current.delete(key));
    }
  }, [browserOn, browser.status, items, classify]);

  const info = model;
  // A kind whose answers rank no classes (a regressor's number) has no top-k nor browser model.
  const regression = !ranksClasses(catalog, info.task);
  const size = (manifest?.preprocessing.size ?? (info.input_spec.size as number[] | null) ?? [28, 28]) as number[];
  const channels = manifest?.preprocessing.channels ?? (info.input_spec.channels as number | undefined) ?? 1;
  const current = items.find((item) => item.id === selected) ?? items[0];
  return (
    <>
      <p className="monitor__meta muted">
        {regression
          ? t('models.metaRegression', {
              channels,
              height: size[0],
              width: size[1] ?? size[0],
              created: formatDate(info.created_at, i18n.language),
            })
          : t('models.meta', {
              classes: info.classes.length,
              channels,
              height: size[0],
              width: size[1] ?? size[0],
              created: formatDate(info.created_at, i18n.language),
            })}
        {trainedBy}
      </p>
      {manifestError !== null && (
        <p className="wb-error" role="alert">
          {t('models.manifestFailed', { message: errorText(manifestError, t) })}
        </p>
      )}

      <div className="predict__grid">
        <div className="predict__inputs">
          <div className="chart-card">
            <h2>{t('models.upload')}</h2>
            <DropZone
              hint={t('models.dropHint')}
              buttonLabel={t('models.chooseImages')}
              accept="image/*"
              multiple
              inputName="images"
              onFiles={(files) => addFiles(files, 'upload')}
            />
          </div>
          {sketchable(channels, size) && (
            <div className="chart-card">
              <h2>{t('models.draw')}</h2>
              <SketchPad
                size={[size[0] ?? 28, size[1] ?? size[0] ?? 28]}
                darkStrokes={
                  manifest?.preprocessing.background
                    ? manifest.preprocessing.background === 'light'
                    : strokesAreDark(manifest?.preprocessing.mean)
                }
                onSketch={(file) => addFiles([file], 'sketch')}
                onLiveSketch={liveSketch}
              />
            </div>
          )}
          {items.length > 0 && (
            <div className="chart-card">
              <h2>{t('models.inputs', { count: items.length })}</h2>
              <ul className="inputs" aria-label={t('models.inputsLabel')}>
                {items.map((item) => {
                  const scores = item.server ?? item.browser;
                  const label =
                    item.value !== undefined
                      ? formatValue(item.value)
                      : scores
                        ? info.classes[scores.indexOf(Math.max(...scores))]
                        : null;
                  return (
                    <li key={item.id}>
                      <button
                        type="button"
                        className={`input-chip${current?.id === item.id ? ' is-active' : ''}`}
                        aria-pressed={current?.id === item.id}
                        onClick={() => setSelected(item.id)}
                      >
                        <img src={item.url} alt="" />
                        <span className="input-chip__name" translate={item.live ? undefined : 'no'}>
                          {item.live ? t('models.liveSketch') : item.name}
                        </span>
                        <span className="input-chip__label" title={label ?? undefined}>
                          {item.serverError !== undefined ? '!' : (label ?? '…')}
                        </span>
                      </button>
                    </li>
                  );
                })}
              </ul>
            </div>
          )}
        </div>

        <div className="predict__result">
          {/* The browser runs classifiers only (its answer is class probabilities). */}
          {!regression && (
            <div className="chart-card browser-switch">
              <button
                type="button"
                role="switch"
                aria-checked={browserOn}
                className={`switch${browserOn ? ' is-on' : ''}`}
                onClick={() => setBrowserOn((on) => !on)}
                data-action="browser-inference"
              >
                <span className="switch__track">
                  <span className="switch__thumb" />
                </span>
                <span className="browser-switch__text">{t('models.runInBrowser')}</span>
              </button>
              <span className="muted" data-browser-status={browser.status}>
                {browserOn && t(`models.browserStatus.${browser.status}`)}
                {browser.error && ` ${browser.error}`}
              </span>
            </div>
          )}
          {current ? (
            <PredictionView
              item={current}
              classes={info.classes}
              regression={regression}
              browserOn={browserOn && !regression}
              browserError={browser.status === 'error' ? browser.error : null}
              background={manifest?.preprocessing.background ?? null}
              onInvert={(choice) => setInvert(current, choice)}
            />
          ) : (
            <PageState kind="empty" message={t('models.noInputs')} />
          )}
        </div>
      </div>
    </>
  );
}
