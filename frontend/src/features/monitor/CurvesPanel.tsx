import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { getMetrics, listTasks, type TaskPublic } from '../tasks/api';
import { isActive } from '../tasks/format';
import { formatDate } from '../tasks/format';
import { StatusBadge } from '../tasks/widgets';
import { countPoints, lineChartOption, type LineSpec } from './chartOptions';
import { PALETTE } from './echarts';
import { EChart } from './EChart';
import type { KindMetric } from '../catalog/taskKind';
import { epochSeries, type EpochPoint, type MetricCurves, type MonitorSeries, type Point } from './series';
import { errorText } from '../../i18n/errorText';

const COMPARE_REFRESH_MS = 5000;
const MAX_COMPARED = 5;

interface Compared {
  task: TaskPublic;
  points: EpochPoint[];
}

/** Epoch metrics of the picked tasks, refreshed while one of them still trains. */
function useCompared(picked: readonly TaskPublic[]): { compared: Compared[]; error: string | null } {
  const [compared, setCompared] = useState<Compared[]>([]);
  const { t } = useTranslation();
  // The reason itself, worded when shown: in the language of the moment.
  const [failure, setFailure] = useState<unknown>(null);
  const error = failure === null ? null : errorText(failure, t);
  useEffect(() => {
    let cancelled = false;
    let timer: number | undefined;
    const load = () => {
      Promise.all(
        picked.map(async (task) => ({
          task,
          points: (await getMetrics(task.id, 'epoch')).map((p) => ({ epoch: p.epoch, step: p.step, values: p.values })),
        })),
      )
        .then((list) => {
          if (cancelled) return;
          setCompared(list);
          setFailure(null);
          if (picked.some((task) => isActive(task.status))) timer = window.setTimeout(load, COMPARE_REFRESH_MS);
        })
        .catch((reason: unknown) => !cancelled && setFailure(reason));
    };
    if (picked.length) load();
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
    };
  }, [picked]);
  // Nothing picked: nothing to compare, whatever the last answer held.
  return { compared: picked.length ? compared : [], error };
}

function ComparePicker({
  taskId,
  picked,
  onChange,
}: {
  taskId: string;
  picked: TaskPublic[];
  onChange: (tasks: TaskPublic[]) => void;
}) {
  const { t, i18n } = useTranslation();
  const [tasks, setTasks] = useState<TaskPublic[] | null>(null);
  // The reason itself, worded when shown: in the language of the moment.
  const [failure, setFailure] = useState<unknown>(null);
  const error = failure === null ? null : errorText(failure, t);
  useEffect(() => {
    listTasks(null, 0, 100)
      .then((page) => setTasks(page.data.filter((task) => task.id !== taskId)))
      .catch((reason: unknown) => setFailure(reason));
  }, [taskId]);
  const ids = new Set(picked.map((task) => task.id));
  const toggle = (task: TaskPublic) =>
    onChange(ids.has(task.id) ? picked.filter((p) => p.id !== task.id) : [...picked, task].slice(-MAX_COMPARED));
  return (
    <fieldset className="compare__list">
      <legend>{t('monitor.compareLegend', { max: MAX_COMPARED })}</legend>
      {error && (
        <p className="wb-error" role="alert">
          {error}
        </p>
      )}
      {!tasks && !error && <p className="muted">{t('tasks.loading')}</p>}
      {tasks?.length === 0 && <p className="muted">{t('monitor.compareNone')}</p>}
      {tasks?.map((task) => (
        <label key={task.id} className="compare__item">
          <input type="checkbox" checked={ids.has(task.id)} onChange={() => toggle(task)} />
          <span className="compare__name">{task.name}</span>
          <StatusBadge status={task.status} />
          <span className="muted compare__date">{formatDate(task.created_at, i18n.language)}</span>
        </label>
      ))}
    </fieldset>
  );
}

interface Props {
  taskId: string;
  taskName: string;
  series: MonitorSeries;
  /** The metrics of the run's task kind, besides the loss (accuracy; MAE, RMSE, R²). */
  metrics: readonly KindMetric[];
  /** The curves of those metrics, by metric name. */
  curves: Readonly<Record<string, MetricCurves>>;
  /** The planned epochs (the x axis spans them from the start). */
  epochs: number | null;
}

function ChartCard({ id, title, chart, height }: { id: string; title: string; chart: Chart; height: number }) {
  const { t } = useTranslation();
  return (
    <figure className="chart-card" data-chart={id}>
      <figcaption>{title}</figcaption>
      <EChart
        option={chart.option}
        points={chart.points}
        label={t('monitor.chartLabel', { name: title, count: chart.points })}
        height={height}
      />
    </figure>
  );
}

interface Chart {
  option: ReturnType<typeof lineChartOption>;
  points: number;
}

export function CurvesPanel({ taskId, taskName, series, metrics, curves, epochs }: Props) {
  const { t } = useTranslation();
  const [picked, setPicked] = useState<TaskPublic[]>([]);
  const [picking, setPicking] = useState(false);
  const { compared, error } = useCompared(picked);

  const charts = useMemo(() => {
    const epochAxis = t('monitor.epochAxis');
    const empty = t('monitor.waiting');
    const overlay = (key: string): LineSpec[] =>
      compared.map((item, i) => ({
        name: t('monitor.compareSeries', { name: item.task.name }),
        data: epochSeries(item.points, key),
        kind: 'compare',
        color: PALETTE[(i + 2) % PALETTE.length]!,
      }));
    const trainAndVal = (steps: Point[], train: Point[], val: Point[], valKey: string): LineSpec[] => [
      { name: t('monitor.trainSteps'), data: steps, kind: 'steps', color: PALETTE[0]! },
      { name: t('monitor.trainEpoch'), data: train, kind: 'epochs', color: PALETTE[0]! },
      { name: t('monitor.val'), data: val, kind: 'epochs', color: PALETTE[1]! },
      ...overlay(valKey),
    ];
    const lr: LineSpec[] = [
      { name: t('monitor.lrSteps'), data: series.lrSteps, kind: 'steps', color: PALETTE[4]! },
      { name: t('monitor.lrEpoch'), data: series.lr, kind: 'epochs', color: PALETTE[4]! },
    ];
    const speed: LineSpec[] = [
      { name: t('monitor.samplesPerS'), data: series.samplesPerS, kind: 'epochs', color: PALETTE[3]! },
      { name: t('monitor.epochTime'), data: series.epochTime, kind: 'epochs', color: PALETTE[5]!, rightAxis: true },
    ];
    const memory: LineSpec[] = [
      { name: t('monitor.peakMemory'), data: series.peakMemory, kind: 'epochs', color: PALETTE[6]! },
    ];
    const make = (
      lines: LineSpec[],
      yName: string,
      extra: { percent?: boolean; rightName?: string; zeroBased?: boolean } = {},
    ): Chart => ({
      option: lineChartOption({ lines, xName: epochAxis, yName, emptyText: empty, xMax: epochs, ...extra }),
      points: countPoints(lines),
    });
    const none: MetricCurves = { steps: [], train: [], val: [] };
    return {
      loss: make(
        trainAndVal(series.trainLossSteps, series.trainLoss, series.valLoss, 'val_loss'),
        t('monitor.lossAxis'),
      ),
      metrics: metrics.map((metric) => {
        const c = curves[metric.key] ?? none;
        return {
          key: metric.key,
          chart: make(
            trainAndVal(c.steps, c.train, c.val, `val_${metric.key}`),
            t(`monitor.metricAxis.${metric.key}`),
            {
              percent: metric.percent,
            },
          ),
        };
      }),
      lr: make(lr, t('monitor.lrAxis')),
      speed: make(speed, t('monitor.samplesAxis'), { rightName: t('monitor.secondsAxis'), zeroBased: true }),
      memory: make(memory, t('monitor.memoryAxis'), { zeroBased: true }),
    };
  }, [series, metrics, curves, compared, epochs, t]);

  return (
    <div className="curves">
      <div className="curves__tools">
        <button
          type="button"
          className={`btn${picking ? ' is-active' : ''}`}
          aria-expanded={picking}
          onClick={() => setPicking((open) => !open)}
        >
          {t('monitor.compare')}
          {picked.length > 0 && <span className="pill">{picked.length}</span>}
        </button>
        {picked.length > 0 && (
          <span className="muted">
            {t('monitor.comparing', { name: taskName, others: picked.map((task) => task.name).join(', ') })}
          </span>
        )}
        {error && (
          <span className="wb-error" role="alert">
            {error}
          </span>
        )}
      </div>
      {picking && <ComparePicker taskId={taskId} picked={picked} onChange={setPicked} />}
      <div className="curves__grid curves__grid--main">
        <ChartCard id="loss" title={t('monitor.loss')} chart={charts.loss} height={280} />
        {charts.metrics.map(({ key, chart }) => (
          <ChartCard key={key} id={key} title={t(`monitor.metric.${key}`)} chart={chart} height={280} />
        ))}
      </div>
      <div className="curves__grid curves__grid--small">
        <ChartCard id="lr" title={t('monitor.lr')} chart={charts.lr} height={200} />
        <ChartCard id="speed" title={t('monitor.speed')} chart={charts.speed} height={200} />
        <ChartCard id="memory" title={t('monitor.memory')} chart={charts.memory} height={200} />
      </div>
    </div>
  );
}
