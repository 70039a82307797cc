import { memo, useEffect, useRef } from 'react';
import { echarts, type ChartOption } from './echarts';

interface Props {
  option: ChartOption;
  /** The accessible name of the chart (a canvas has no text of its own). */
  label: string;
  height?: number;
  className?: string;
  /** Points drawn, exposed as data-points for tests and shown to screen readers in `label`. */
  points?: number;
  /** Replace the whole option instead of merging (series that disappear must go). */
  replace?: boolean;
}

/** One ECharts instance on a div: created on mount, updated with setOption, resized with its box. */
export const EChart = memo(function EChart({ option, label, height = 260, className, points, replace = true }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);

  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const instance = echarts.init(element, undefined, { renderer: 'canvas' });
    chart.current = instance;
    const observer = new ResizeObserver(() => instance.resize());
    observer.observe(element);
    return () => {
      observer.disconnect();
      instance.dispose();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    chart.current?.setOption(option, { notMerge: replace, lazyUpdate: true });
  }, [option, replace]);

  return (
    <div
      ref={ref}
      className={className ? `echart ${className}` : 'echart'}
      style={{ height }}
      role="img"
      aria-label={label}
      data-points={points}
    />
  );
});
