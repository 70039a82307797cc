// ECharts with only the pieces the UI draws: line curves, the confusion-matrix heat map, the
// prediction pie, the dataset and residual bar charts and the predicted-vs-actual scatter (tree-shaken; see echarts.apache.org "import on demand").
import { BarChart, HeatmapChart, LineChart, PieChart, ScatterChart } from 'echarts/charts';
import {
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  TooltipComponent,
  VisualMapComponent,
} from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([
  LineChart,
  HeatmapChart,
  PieChart,
  BarChart,
  ScatterChart,
  GridComponent,
  TooltipComponent,
  LegendComponent,
  VisualMapComponent,
  DataZoomComponent,
  CanvasRenderer,
]);

export { echarts };
export type ChartOption = echarts.EChartsCoreOption;

/** Series colours shared by the charts (train, validation, then compared tasks). */
export const PALETTE = ['#4f46e5', '#ea580c', '#16a34a', '#0891b2', '#c026d3', '#d97706', '#64748b', '#dc2626'];
