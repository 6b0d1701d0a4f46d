/** The whole server's statistics in one answer, for the operator console's overview (engine/stats/overview.ts). */
import { overviewOf } from '../../engine/stats/index.js'
import type { RouteDef } from '../route-table.js'
import { RANGE, rangeOf } from './stats.js'

export const overviewRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/stats/overview',
    tag: 'statistics',
    summary:
      'the whole server over the days from..to: requests and blocks per hour and day, top blocked names and categories, anonymous against users',
    description:
      'Totals count every query of every address. topCategories counts each block for the categories that blocked it ' +
      "(none for a block by a list or the allow-only mode; both when two of the name's categories are filtered); " +
      'blocks imported by a version before count for every category of the name. Imported every few seconds (stats.rotate + stats.import-interval), like the per-user reports.',
    query: RANGE,
    ok: [{ status: 200, description: 'the overview', schema: 'Overview' }],
    errors: [400],
    async handle(ctx, req, res) {
      const [from, to] = rangeOf(ctx.stats, req)
      res.json(await overviewOf(ctx.stats.reports, ctx.stats.time, from, to))
    }
  },
  {
    method: 'GET',
    path: '/stats/timezone',
    tag: 'statistics',
    summary: 'the time zone of the reports and of schedule rules that name none (stats.timezone)',
    description:
      'The console shows every time of a page in this zone, labelled with it: the charts (whose hours and days ' +
      'are in it), the live query log and the schedule editor (a rule without a timezone runs in it).',
    ok: [{ status: 200, description: 'the zone, an IANA name', schema: 'TimeZone' }],
    errors: [],
    handle(ctx, _req, res) {
      res.json({ timezone: ctx.stats.time.timeZone })
    }
  }
]
