import { useEffect, useRef, useState, type PointerEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { grayPng } from './decode';
import { grayToRgba, sketchToImage } from './sketch';

const PAD = 280;
const PEN = 20;

interface Props {
  /** The model's input size, [height, width]. */
  size: [number, number];
  /** Dark strokes on light paper (the model's images look like that). */
  darkStrokes: boolean;
  onSketch: (file: File) => void;
  disabled?: boolean;
}

/** A drawing pad: white strokes on black; "Classify" hands the processed image to the caller. */
export function SketchPad({ size, darkStrokes, onSketch, disabled }: Props) {
  const { t } = useTranslation();
  const pad = useRef<HTMLCanvasElement>(null);
  const preview = useRef<HTMLCanvasElement>(null);
  const drawing = useRef(false);
  const count = useRef(0);
  const [invert, setInvert] = useState(darkStrokes);
  const [processed, setProcessed] = useState<Uint8ClampedArray | null>(null);
  const [height, width] = size;

  useEffect(() => setInvert(darkStrokes), [darkStrokes]);

  const context = () => pad.current?.getContext('2d', { willReadFrequently: true }) ?? null;

  const clear = () => {
    const ctx = context();
    if (!ctx) return;
    ctx.fillStyle = '#000';
    ctx.fillRect(0, 0, PAD, PAD);
    setProcessed(null);
  };
  useEffect(clear, []);

  const process = () => {
    const ctx = context();
    if (!ctx) return;
    const { data } = ctx.getImageData(0, 0, PAD, PAD);
    const ink = new Uint8ClampedArray(PAD * PAD);
    for (let i = 0; i < ink.length; i += 1) ink[i] = data[i * 4]!;
    setProcessed(sketchToImage(ink, PAD, PAD, { width, height, invert }));
  };
  // The preview follows the invert switch and the model's size.
  useEffect(process, [invert, width, height]);

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
  };
  const up = () => {
    if (!drawing.current) return;
    drawing.current = false;
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
