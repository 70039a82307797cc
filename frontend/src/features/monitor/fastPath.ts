import type { TFunction } from 'i18next';

/** What the trainer's start event says a run trains in (`FastPath.to_dict()` in the engine). */
interface FastPath {
  precision: string;
  memory_format: string;
  reason: string;
  speedup: number | null;
  measurements: unknown[];
}

function isFastPath(value: unknown): value is FastPath {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as FastPath).precision === 'string' &&
    typeof (value as FastPath).memory_format === 'string'
  );
}

const layoutName = (value: FastPath, t: TFunction) =>
  t(`monitor.fastPath.layout.${value.memory_format}`, { defaultValue: value.memory_format });

/** The precision and layout a run decided on, for the settings it left on "auto". */
export function fastPathDecided(value: unknown, t: TFunction): Record<string, string> {
  if (!isFastPath(value)) return {};
  const layout = layoutName(value, t);
  return { precision: value.precision, memory_format: layout };
}

/** One line for the run's summary: the precision and layout, and whether they were measured or kept. */
export function fastPathLine(value: unknown, t: TFunction): string | null {
  if (!isFastPath(value)) return null;
  const layout = layoutName(value, t);
  const choice = t('monitor.fastPath.value', { precision: value.precision, layout });
  if (value.reason.startsWith('kept from the checkpoint')) return t('monitor.fastPath.kept', { choice });
  if (value.measurements.length > 1 && value.speedup !== null) {
    if (value.speedup > 1) return t('monitor.fastPath.measured', { choice, speedup: value.speedup.toFixed(2) });
    return t('monitor.fastPath.probed', { choice });
  }
  // Not measured: say why, in the words of the engine's reason (`fastpath.choose`).
  const why = UNMEASURED.find(([start]) => value.reason.startsWith(start));
  return why ? t(`monitor.fastPath.${why[1]}`, { choice }) : choice;
}

const UNMEASURED: readonly (readonly [string, string])[] = [
  ['a small run', 'small'],
  ['a short run', 'short'],
  ['no convolution over images', 'nothing'],
  ['nothing to measure', 'nothing'],
  ['as set in the train node', 'set'],
  ['CUDA', 'cuda'],
];
