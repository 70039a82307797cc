import { useEffect, useRef, useState, type PointerEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { grayPng } from './decode';
import { grayToRgba, sketchToImage } from './sketch';
import { throttle, type Throttled } from './throttle';

const PAD = 280;
const PEN = 20;
/** How often the live prediction follows a stroke while it is drawn (and once more at its end). */
const LIVE_EVERY_MS = 250;

interface Props {
  /** The model's input size, [height, width]. */
  size: [number, number];
  /** Dark strokes on light paper (the model's images look like that). */
  darkStrokes: boolean;
  onSketch: (file: File) => void;
  /** The drawing as the model sees it, while drawing (at most every LIVE_EVERY_MS) and at a
   * stroke's end; null when cleared. */
  onLiveSketch?: (file: File | null) => void;
  disabled?: boolean;
}

function paintBlank(ctx: CanvasRenderingContext2D): void {
  ctx.fillStyle = '#000';
  ctx.fillRect(0, 0, PAD, PAD);
}

/** A drawing pad: white strokes on black; "Classify" hands the processed image to the caller, and
 * `onLiveSketch` gets it at each change. */
export function SketchPad({ size, darkStrokes, onSketch, onLiveSketch, disabled }: Props) {
  const { t } = useTranslation();
  const pad = useRef<HTMLCanvasElement>(null);
  const preview = useRef<HTMLCanvasElement>(null);
  const drawing = useRef(false);
  const count = useRef(0);
  const live = useRef<Throttled | null>(null);
  const liveSeq = useRef(0);
  // The latest callback, so a drawing finished after a re-render reaches the current page state.
  const onLive = useRef(onLiveSketch);
  useEffect(() => {
    onLive.current = onLiveSketch;
  });
  const [invert, setInvert] = useState(darkStrokes);
  const [processed, setProcessed] = useState<Uint8ClampedArray | null>(null);
  const [height, width] = size;

  // A model with the other stroke colour sets the switch anew (while rendering: no stale frame).
  const [strokesOf, setStrokesOf] = useState(darkStrokes);
  if (strokesOf !== darkStrokes) {
    setStrokesOf(darkStrokes);
    setInvert(darkStrokes);
  }

  const context = () => pad.current?.getContext('2d', { willReadFrequently: true }) ?? null;

  const clear = () => {
    const ctx = context();
    if (!ctx) return;
    paintBlank(ctx);
    setProcessed(null);
  };
  useEffect(() => {
    const ctx = pad.current?.getContext('2d', { willReadFrequently: true });
    if (ctx) paintBlank(ctx);
  }, []);

  const process = () => {
    const ctx = context();
    if (!ctx) return;
    const { data } = ctx.getImageData(0, 0, PAD, PAD);
    const ink = new Uint8ClampedArray(PAD * PAD);
    for (let i = 0; i < ink.length; i += 1) ink[i] = data[i * 4]!;
    setProcessed(sketchToImage(ink, PAD, PAD, { width, height, invert }));
  };
  // The throttle outlives renders; it calls the latest `process` (invert and size of this render).
  const latestProcess = useRef(process);
  useEffect(() => {
    latestProcess.current = process;
  });
  const liveThrottle = () => (live.current ??= throttle(() => latestProcess.current(), LIVE_EVERY_MS));
  // The preview follows the invert switch and the model's size.
  // eslint-disable-next-line react-hooks/set-state-in-effect -- reads the drawn pixels from the canvas, outside React
  useEffect(process, [invert, width, height]);

  // Every processed image goes live; an older one still being encoded is dropped.
  useEffect(() => {
    const seq = ++liveSeq.current;
    if (!processed) {
      onLive.current?.(null);
      return;
    }
    void grayPng(grayToRgba(processed), width, height, 'sketch-live.png').then((file) => {
      if (seq === liveSeq.current) onLive.current?.(file);
    });
  }, [processed, width, height]);
  useEffect(() => () => live.current?.cancel(), []);

  useEffect(() => {
    const canvas = preview.current;
    const ctx = canvas?.getContext('2d');
    if (!canvas || !ctx) return;
    ctx.clearRect(0, 0, width, height);
    if (processed) ctx.putImageData(new ImageData(grayToRgba(processed), width, height), 0, 0);
  }, [processed, width, height]);

  const point = (event: PointerEvent<HTMLCanvasElement>) => {
    const rect = event.currentTarget.getBoundingClientRect();
    return { x: ((event.clientX - rect.left) / rect.width) * PAD, y: ((event.clientY - rect.top) / rect.height) * PAD };
  };
  const down = (event: PointerEvent<HTMLCanvasElement>) => {
    const ctx = context();
    if (!ctx || disabled) return;
    event.currentTarget.setPointerCapture(event.pointerId);
    drawing.current = true;
    const { x, y } = point(event);
    ctx.strokeStyle = '#fff';
    ctx.fillStyle = '#fff';
    ctx.lineWidth = PEN;
    ctx.lineCap = 'round';
    ctx.lineJoin = 'round';
    ctx.beginPath();
    ctx.arc(x, y, PEN / 2, 0, Math.PI * 2);
    ctx.fill();
    ctx.beginPath();
    ctx.moveTo(x, y);
  };
  const move = (event: PointerEvent<HTMLCanvasElement>) => {
    const ctx = context();
    if (!ctx || !drawing.current) return;
    const { x, y } = point(event);
    ctx.lineTo(x, y);
    ctx.stroke();
    liveThrottle().request();
  };
  const up = () => {
    if (!drawing.current) return;
    drawing.current = false;
    live.current?.cancel();
    process();
  };

  const classify = async () => {
    if (!processed) return;
    count.current += 1;
    onSketch(await grayPng(grayToRgba(processed), width, height, `sketch-${count.current}.png`));
  };

  return (
    <div className="sketch">
      <canvas
        ref={pad}
        width={PAD}
        height={PAD}
        className="sketch__pad"
        aria-label={t('models.padLabel')}
        role="img"
        onPointerDown={down}
        onPointerMove={move}
        onPointerUp={up}
        onPointerCancel={up}
      />
      <div className="sketch__side">
        <figure className="sketch__preview">
          <canvas
            ref={preview}
            width={width}
            height={height}
            aria-label={t('models.previewLabel', { width, height })}
            role="img"
          />
          <figcaption>{t('models.modelSees', { width, height })}</figcaption>
        </figure>
        <label className="inline-check">
          <input type="checkbox" checked={invert} onChange={(event) => setInvert(event.target.checked)} />
          {t('models.invert')}
        </label>
        <div className="sketch__buttons">
          <button type="button" className="btn" onClick={clear}>
            {t('models.clear')}
          </button>
          <button
            type="button"
            className="btn btn--primary"
            onClick={() => void classify()}
            disabled={!processed || disabled}
            data-action="classify-sketch"
          >
            {t('models.classifySketch')}
          </button>
        </div>
      </div>
    </div>
  );
}
