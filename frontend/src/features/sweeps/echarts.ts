// The sweep page's extra ECharts pieces (parallel coordinates) on top of the monitor's tree-shaken set.
import { ParallelChart } from 'echarts/charts';
import { ParallelComponent } from 'echarts/components';
import { echarts } from '../monitor/echarts';

echarts.use([ParallelChart, ParallelComponent]);

export { EChart } from '../monitor/EChart';
