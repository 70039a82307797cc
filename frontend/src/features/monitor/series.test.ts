import { describe, expect, it } from 'vitest';
import {
  buildSeries,
  currentStep,
  INITIAL_STATE,
  latestEpochValue,
  parseEvent,
  progressShare,
  reduceEvents,
  type TaskEvent,
} from './series';

let nextId = 1;
const ev = (kind: string, data: Record<string, unknown>, id = nextId++): TaskEvent => ({ id, kind, data });
const step = (epoch: number, stepNo: number, loss: number) =>
  ev('metric', { scope: 'step', epoch, step: stepNo, values: { loss, accuracy: 0.5, lr: 0.01 } });
const epoch = (n: number, stepNo: number, values: Record<string, number>) =>
  ev('metric', { scope: 'epoch', epoch: n, step: stepNo, values });

function run(): TaskEvent[] {
  nextId = 1;
  return [
    ev('status', { status: 'QUEUED', message: 'submitted' }),
    ev('status', { status: 'RUNNING', attempt: 1 }),
    ev('start', { epochs: 2, steps_per_epoch: 20 }),
    ev('progress', { epoch: 1, step: 5, steps_per_epoch: 20 }),
    step(1, 5, 2.0),
    step(1, 15, 1.5),
    epoch(1, 20, {
      loss: 1.6,
      accuracy: 0.6,
      val_loss: 1.2,
      val_accuracy: 0.7,
      lr: 0.01,
      samples_per_s: 900,
      epoch_time_s: 1.5,
      peak_memory_mb: 120,
    }),
    step(2, 30, 0.9),
    epoch(2, 40, {
      loss: 0.8,
      accuracy: 0.8,
      val_loss: 0.7,
      val_accuracy: 0.85,
      lr: 0.01,
      samples_per_s: 1000,
      epoch_time_s: 1.2,
      peak_memory_mb: 121,
    }),
    ev('metric', { scope: 'test', epoch: 2, step: 40, values: { test_accuracy: 0.83, test_loss: 0.75 } }),
    ev('artifact', { kind: 'report', path: 'x' }),
    ev('status', { status: 'SUCCEEDED', message: 'training finished' }),
  ];
}

describe('reduceEvents', () => {
  it('turns a run into step points, epoch points and test metrics', () => {
    const state = reduceEvents(INITIAL_STATE, run());
    expect(state.status).toBe('SUCCEEDED');
    expect(state.lastEventId).toBe(12);
    expect(state.steps.map((p) => p.step)).toEqual([5, 15, 30]);
    expect(state.epochPoints.map((p) => p.epoch)).toEqual([1, 2]);
    expect(state.test).toEqual({ test_accuracy: 0.83, test_loss: 0.75 });
    expect(state.artifacts).toEqual(['report']);
    expect(latestEpochValue(state, 'val_accuracy')).toBe(0.85);
    expect(progressShare(state)).toBe(1);
  });

  it('ignores events it has already seen (a replay after reconnecting)', () => {
    const events = run();
    const once = reduceEvents(INITIAL_STATE, events);
    const twice = reduceEvents(once, events);
    expect(twice).toBe(once);
    const partial = reduceEvents(INITIAL_STATE, events.slice(0, 6));
    expect(reduceEvents(partial, events.slice(3))).toEqual(once);
  });

  it('replaces the steps and epochs a resumed attempt runs again', () => {
    nextId = 100;
    const first = reduceEvents(INITIAL_STATE, [
      ev('start', { epochs: 3, steps_per_epoch: 10 }),
      step(1, 4, 2.0),
      epoch(1, 10, { loss: 1.5 }),
      step(2, 14, 1.4),
      step(2, 18, 1.3),
      ev('status', { status: 'STOPPED' }),
      ev('error', { code: 'worker_lost', message: 'the worker died' }),
    ]);
    expect(first.error?.code).toBe('worker_lost');
    const resumed = reduceEvents(first, [
      ev('status', { status: 'QUEUED', message: 'retry requested' }),
      ev('status', { status: 'RUNNING', attempt: 2 }),
      step(2, 12, 1.35),
      epoch(2, 20, { loss: 1.2 }),
    ]);
    expect(resumed.error).toBeNull();
    expect(resumed.attempt).toBe(2);
    expect(resumed.steps.map((p) => p.step)).toEqual([4, 12]);
    expect(resumed.epochPoints.map((p) => [p.epoch, p.values.loss])).toEqual([
      [1, 1.5],
      [2, 1.2],
    ]);
  });

  it('knows the current step from progress and step metric events, whichever is newer', () => {
    nextId = 250;
    const state = reduceEvents(INITIAL_STATE, [
      ev('start', { epochs: 2, steps_per_epoch: 10 }),
      ev('progress', { epoch: 1, step: 1, steps_per_epoch: 10 }),
      step(1, 4, 2.0),
    ]);
    expect(currentStep(state)).toEqual({ epoch: 1, step: 4 });
    const later = reduceEvents(state, [ev('progress', { epoch: 2, step: 3, steps_per_epoch: 10 })]);
    expect(currentStep(later)).toEqual({ epoch: 2, step: 3 });
    expect(currentStep(INITIAL_STATE)).toBeNull();
  });

  it('tracks progress within an epoch', () => {
    nextId = 200;
    const state = reduceEvents(INITIAL_STATE, [
      ev('start', { epochs: 2, steps_per_epoch: 10 }),
      ev('progress', { epoch: 2, step: 5, steps_per_epoch: 10 }),
    ]);
    expect(progressShare(state)).toBeCloseTo(0.75);
    expect(progressShare(INITIAL_STATE)).toBeNull();
  });
});

describe('buildSeries', () => {
  it('puts steps on the epoch axis and epochs at their number', () => {
    const series = buildSeries(reduceEvents(INITIAL_STATE, run()));
    expect(series.trainLossSteps).toEqual([
      [0.25, 2.0],
      [0.75, 1.5],
      [1.5, 0.9],
    ]);
    expect(series.trainLoss).toEqual([
      [1, 1.6],
      [2, 0.8],
    ]);
    expect(series.valLoss).toEqual([
      [1, 1.2],
      [2, 0.7],
    ]);
    expect(series.valAcc).toEqual([
      [1, 0.7],
      [2, 0.85],
    ]);
    expect(series.lrSteps).toHaveLength(3);
    expect(series.samplesPerS).toEqual([
      [1, 900],
      [2, 1000],
    ]);
    expect(series.epochTime).toEqual([
      [1, 1.5],
      [2, 1.2],
    ]);
    expect(series.peakMemory).toEqual([
      [1, 120],
      [2, 121],
    ]);
  });

  it('falls back to the epoch when steps per epoch are unknown', () => {
    nextId = 300;
    const series = buildSeries(reduceEvents(INITIAL_STATE, [step(3, 50, 1.0)]));
    expect(series.trainLossSteps).toEqual([[3, 1.0]]);
  });
});

describe('parseEvent', () => {
  it('reads the JSON data of an event and refuses anything else', () => {
    expect(parseEvent('7', 'metric', '{"scope":"step"}')).toEqual({ id: 7, kind: 'metric', data: { scope: 'step' } });
    expect(parseEvent('x', 'metric', '{}')).toBeNull();
    expect(parseEvent(1, 'log', 'not json')).toBeNull();
    expect(parseEvent(1, 'log', '[1]')).toBeNull();
  });
});
