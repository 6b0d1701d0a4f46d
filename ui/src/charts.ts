/** Chart.js, tree-shaken to the parts the console draws, in the block page's colours. */
import {
  Chart,
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  Legend,
  Tooltip,
  Filler,
  DoughnutController,
  ArcElement
} from 'chart.js'
import type { Chart as ChartData } from './api.js'
import { h } from './dom.js'

Chart.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  Legend,
  Tooltip,
  Filler,
  DoughnutController,
  ArcElement
)
Chart.defaults.font.family = 'system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif'
Chart.defaults.animation = false

const COLORS: Record<string, string> = { Requests: '#2563eb', Blocks: '#dc2626', NXdomain: '#9ca3af' }

/** Draws `data` into a new canvas; dataset labels are translated with `label`. */
export function chart(
  kind: 'bar' | 'line',
  data: ChartData,
  label: (l: string) => string,
  opts: { horizontal?: boolean; height?: number } = {}
): HTMLElement {
  const canvas = h('canvas')
  const box = h('div', { class: 'chart', style: `height:${opts.height ?? 260}px` }, canvas)
  new Chart(canvas, {
    type: kind,
    data: {
      labels: data.labels,
      datasets: data.datasets.map((d) => ({
        label: label(d.label),
        data: d.data,
        backgroundColor: kind === 'line' ? COLORS[d.label] + '22' : COLORS[d.label],
        borderColor: COLORS[d.label],
        borderWidth: kind === 'line' ? 2 : 0,
        pointRadius: 0,
        fill: kind === 'line',
        tension: 0.25,
        borderRadius: 3
      }))
    },
    options: {
      maintainAspectRatio: false,
      indexAxis: opts.horizontal === true ? 'y' : 'x',
      interaction: { mode: 'index', intersect: false },
      plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } } },
      scales: {
        x: { grid: { display: false }, ticks: { maxRotation: 0, autoSkip: true, maxTicksLimit: 12 } },
        y: { beginAtZero: true, ticks: { precision: 0 } }
      }
    }
  })
  return box
}

export function doughnut(labels: string[], values: number[]): HTMLElement {
  const canvas = h('canvas')
  const box = h('div', { class: 'chart', style: 'height:220px' }, canvas)
  new Chart(canvas, {
    type: 'doughnut',
    data: { labels, datasets: [{ data: values, backgroundColor: ['#9ca3af', '#2563eb'], borderWidth: 0 }] },
    options: { maintainAspectRatio: false, plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } } } }
  })
  return box
}
