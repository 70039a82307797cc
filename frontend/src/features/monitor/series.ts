// Server-sent task events -> monitor state -> chart series. Pure, so replay, resume and the
// re-run of steps after a checkpoint resume can be unit-tested without a browser.
//
// The x axis of every curve is in epochs: a step point sits at step / steps_per_epoch, an epoch
// point at its epoch number, so tasks with different batch sizes overlay sensibly.

export type Values = Record<string, number>;

/** One parsed server-sent event: `id:`, `event:` and the JSON of `data:`. */
export interface TaskEvent {
  id: number;
  kind: string;
  data: Record<string, unknown>;
}

export interface StepPoint {
  step: number;
  epoch: number;
  values: Values;
}

export interface EpochPoint {
  epoch: number;
  step: number;
  values: Values;
}

export interface MonitorState {
  /** The newest event id applied; older or equal ids are ignored (replays, reconnects). */
  lastEventId: number;
  status: string | null;
  statusMessage: string | null;
  attempt: number | null;
  epochs: number | null;
  stepsPerEpoch: number | null;
  /** The epoch in progress and the step within it, from progress events. */
  progress: { epoch: number; step: number } | null;
  steps: StepPoint[];
  epochPoints: EpochPoint[];
  test: Values | null;
  start: Record<string, unknown> | null;
  error: { code: string | null; message: string } | null;
  /** Artifact kinds written so far (checkpoint, model, report). */
  artifacts: string[];
}

export const INITIAL_STATE: MonitorState = {
  lastEventId: 0,
  status: null,
  statusMessage: null,
  attempt: null,
  epochs: null,
  stepsPerEpoch: null,
  progress: null,
  steps: [],
  epochPoints: [],
  test: null,
  start: null,
  error: null,
  artifacts: [],
};

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function numericValues(value: unknown): Values {
  const out: Values = {};
  if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) if (typeof v === 'number' && Number.isFinite(v)) out[key] = v;
  }
  return out;
}

/** Parse the `data:` text of an event; null when it is not a JSON object. */
export function parseEvent(id: string | number, kind: string, text: string): TaskEvent | null {
  const eventId = typeof id === 'number' ? id : Number.parseInt(id, 10);
  if (!Number.isFinite(eventId)) return null;
  try {
    const data: unknown = JSON.parse(text);
    if (!data || typeof data !== 'object' || Array.isArray(data)) return null;
    return { id: eventId, kind, data: data as Record<string, unknown> };
  } catch {
    return null;
  }
}

function applyMetric(state: MonitorState, data: Record<string, unknown>): MonitorState {
  const scope = str(data.scope);
  const epoch = num(data.epoch) ?? 0;
  const step = num(data.step) ?? 0;
  const values = numericValues(data.values);
  if (scope === 'step') {
    // A resumed attempt re-runs the steps after its checkpoint: the new points replace the old.
    const kept =
      state.steps.length && state.steps[state.steps.length - 1]!.step >= step
        ? state.steps.filter((point) => point.step < step)
        : state.steps;
    return { ...state, steps: [...kept, { step, epoch, values }] };
  }
  if (scope === 'epoch') {
    const kept = state.epochPoints.filter((point) => point.epoch < epoch);
    return { ...state, epochPoints: [...kept, { epoch, step, values }] };
  }
  if (scope === 'test') return { ...state, test: values };
  return state;
}

/** Apply one event; events already applied (id <= lastEventId) leave the state as it is. */
export function reduceEvent(state: MonitorState, event: TaskEvent): MonitorState {
  if (event.id <= state.lastEventId) return state;
  const next: MonitorState = { ...state, lastEventId: event.id };
  const { data } = event;
  switch (event.kind) {
    case 'status': {
      const status = str(data.status) ?? next.status;
      const restarted = status === 'QUEUED' || status === 'RUNNING';
      return {
        ...next,
        status,
        statusMessage: str(data.message),
        attempt: num(data.attempt) ?? next.attempt,
        // A retry clears the previous failure; the final status keeps what the error event said.
        error: restarted ? null : next.error,
      };
    }
    case 'start':
      return {
        ...next,
        start: data,
        epochs: num(data.epochs) ?? next.epochs,
        stepsPerEpoch: num(data.steps_per_epoch) ?? next.stepsPerEpoch,
      };
    case 'progress':
      return {
        ...next,
        stepsPerEpoch: num(data.steps_per_epoch) ?? next.stepsPerEpoch,
        progress: { epoch: num(data.epoch) ?? 0, step: num(data.step) ?? 0 },
      };
    case 'metric':
      return applyMetric(next, data);
    case 'artifact': {
      const kind = str(data.kind);
      return kind && !next.artifacts.includes(kind) ? { ...next, artifacts: [...next.artifacts, kind] } : next;
    }
    case 'error':
      return { ...next, error: { code: str(data.code), message: str(data.message) ?? 'error' } };
    default:
      return next;
  }
}

export function reduceEvents(state: MonitorState, events: readonly TaskEvent[]): MonitorState {
  return events.reduce(reduceEvent, state);
}

// --- series -----------------------------------------------------------------------------------

export type Point = [x: number, y: number];

/** Where a step sits on the epoch axis; without steps_per_epoch, at the end of its epoch. */
export function stepX(point: StepPoint, stepsPerEpoch: number | null): number {
  if (stepsPerEpoch && stepsPerEpoch > 0) return point.step / stepsPerEpoch;
  return point.epoch;
}

function stepSeries(state: MonitorState, key: string): Point[] {
  const out: Point[] = [];
  for (const point of state.steps) {
    const value = point.values[key];
    if (value !== undefined) out.push([stepX(point, state.stepsPerEpoch), value]);
  }
  return out;
}

export function epochSeries(points: readonly EpochPoint[], key: string): Point[] {
  const out: Point[] = [];
  for (const point of points) {
    const value = point.values[key];
    if (value !== undefined) out.push([point.epoch, value]);
  }
  return out;
}

/** One metric's curves: training per step and per epoch, validation per epoch. */
export interface MetricCurves {
  steps: Point[];
  train: Point[];
  val: Point[];
}

export function metricCurves(state: MonitorState, key: string): MetricCurves {
  return {
    steps: stepSeries(state, key),
    train: epochSeries(state.epochPoints, key),
    val: epochSeries(state.epochPoints, `val_${key}`),
  };
}

/** Every metric name the run reported so far (steps, epochs and test), for telling its kind. */
export function metricKeys(state: MonitorState): string[] {
  const keys = new Set<string>();
  const add = (values: Values) => Object.keys(values).forEach((key) => keys.add(key));
  state.epochPoints.forEach((point) => add(point.values));
  // The newest steps are enough: every step reports the same names.
  state.steps.slice(-1).forEach((point) => add(point.values));
  if (state.test) add(state.test);
  return [...keys];
}

/** The best validation value of a metric so far (highest or lowest), or null. */
export function bestEpochValue(state: MonitorState, key: string, higherIsBetter: boolean): number | null {
  let best: number | null = null;
  for (const point of state.epochPoints) {
    const value = point.values[key];
    if (value === undefined) continue;
    if (best === null || (higherIsBetter ? value > best : value < best)) best = value;
  }
  return best;
}

export interface MonitorSeries {
  trainLossSteps: Point[];
  trainLoss: Point[];
  valLoss: Point[];
  trainAccSteps: Point[];
  trainAcc: Point[];
  valAcc: Point[];
  lrSteps: Point[];
  lr: Point[];
  samplesPerS: Point[];
  epochTime: Point[];
  peakMemory: Point[];
}

export function buildSeries(state: MonitorState): MonitorSeries {
  const epochs = state.epochPoints;
  return {
    trainLossSteps: stepSeries(state, 'loss'),
    trainLoss: epochSeries(epochs, 'loss'),
    valLoss: epochSeries(epochs, 'val_loss'),
    trainAccSteps: stepSeries(state, 'accuracy'),
    trainAcc: epochSeries(epochs, 'accuracy'),
    valAcc: epochSeries(epochs, 'val_accuracy'),
    lrSteps: stepSeries(state, 'lr'),
    lr: epochSeries(epochs, 'lr'),
    samplesPerS: epochSeries(epochs, 'samples_per_s'),
    epochTime: epochSeries(epochs, 'epoch_time_s'),
    peakMemory: epochSeries(epochs, 'peak_memory_mb'),
  };
}

/** The newest value of an epoch metric, or null. */
export function latestEpochValue(state: MonitorState, key: string): number | null {
  for (let i = state.epochPoints.length - 1; i >= 0; i -= 1) {
    const value = state.epochPoints[i]!.values[key];
    if (value !== undefined) return value;
  }
  return null;
}

/** Share of the planned steps done, 0..1, from the events (null before the start event). */
export function progressShare(state: MonitorState): number | null {
  if (state.status === 'SUCCEEDED') return 1;
  const { epochs, stepsPerEpoch: spe } = state;
  if (!epochs || !spe) return null;
  const lastEpoch = state.epochPoints[state.epochPoints.length - 1]?.epoch ?? 0;
  const lastStep = state.steps[state.steps.length - 1]?.step ?? 0;
  const inEpoch = state.progress ? (state.progress.epoch - 1) * spe + state.progress.step : 0;
  const done = Math.max(inEpoch, lastEpoch * spe, lastStep);
  return Math.min(1, Math.max(0, done / (epochs * spe)));
}

/** The epoch in progress and the step within it, from the newest progress or step metric event. */
export function currentStep(state: MonitorState): { epoch: number; step: number } | null {
  const spe = state.stepsPerEpoch;
  const last = state.steps[state.steps.length - 1];
  const fromMetric = last && spe ? { epoch: last.epoch, step: last.step - (last.epoch - 1) * spe } : null;
  const fromProgress = state.progress;
  if (!fromMetric) return fromProgress;
  if (!fromProgress) return fromMetric;
  const order = (p: { epoch: number; step: number }) => p.epoch * 1e9 + p.step;
  return order(fromMetric) > order(fromProgress) ? fromMetric : fromProgress;
}
