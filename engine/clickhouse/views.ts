/**
 * A batch in doubt found in the query log, and the views. ClickHouse writes an insert's block to the
 * query log, then to each materialized view in turn (./schema.ts, VIEWS), with no transaction across
 * them: a server killed in between keeps the batch in `queries` and not in some aggregate. The sink
 * finds such a batch already sent and does not send it again (./sink.ts), so before moving on it asks
 * each view's table whether it counted the batch, and gives it the batch where it did not.
 *
 * A view's push of one block is one insert into its table: all of the batch's rows there, or none. So for
 * the keys the batch touches, the table counts what the query log holds (`present`), or that less the
 * batch (`missing`: the view's own SELECT over the batch's rows is inserted into the table). Anything
 * else is another host's insert half done on the same keys: the check is `unsettled` and the caller
 * tries again later.
 */
import type { ClickHouseStore } from './client.js'
import { VIEWS, tablesOf, type ViewOf } from './schema.js'
import { sqlString } from './sql.js'
import { formatDay, parseDay } from '../stats/index.js'

export type ViewState = 'present' | 'missing' | 'unsettled'

/** `date` ± `days` (YYYY-MM-DD). */
function dayAround(date: string, days: number): string {
  return formatDay(parseDay(date)! + days)
}

/** Whether `view`'s table counted the batch `id` of UTC date `date` (in the query log). */
async function viewState(store: ClickHouseStore, view: ViewOf, date: string, id: string): Promise<ViewState> {
  const t = tablesOf(store)
  const ofBatch = view.select(t.queries, `date = ${sqlString(date)} AND batch = ${sqlString(id)}`)
  const keys = `(${view.key}) IN (SELECT ${view.key} FROM (${ofBatch}))`
  // A row's local day is within 14 hours of its UTC date: the rows on the batch's keys are within two dates.
  const around = view.select(
    t.queries,
    `date BETWEEN ${sqlString(dayAround(date, -2))} AND ${sqlString(dayAround(date, 2))}`
  )
  const [r] = await store.rows(
    `SELECT (SELECT ${view.count} FROM (${ofBatch})) AS batch, ` +
      `(SELECT ${view.count} FROM (${around}) WHERE ${keys}) AS logged, ` +
      `(SELECT ${view.count} FROM ${t[view.table]} WHERE ${keys}) AS counted`
  )
  const [batch, logged, counted] = [Number(r?.batch ?? 0), Number(r?.logged ?? 0), Number(r?.counted ?? 0)]
  if (batch === 0 || counted === logged) return 'present'
  return counted === logged - batch ? 'missing' : 'unsettled'
}

/**
 * Gives every view that lacks it the batch `id` (in the query log); returns the views given it and those
 * whose state is unsettled (another insert on the same keys under way: ask again later).
 */
export async function completeViews(
  store: ClickHouseStore,
  date: string,
  id: string
): Promise<{ repaired: string[]; unsettled: string[] }> {
  const t = tablesOf(store)
  const repaired: string[] = []
  const unsettled: string[] = []
  for (const view of VIEWS) {
    const state = await viewState(store, view, date, id)
    if (state === 'missing') {
      await store.command(
        `INSERT INTO ${t[view.table]} ${view.select(t.queries, `date = ${sqlString(date)} AND batch = ${sqlString(id)}`)}`
      )
      repaired.push(view.table)
    } else if (state === 'unsettled') unsettled.push(view.table)
  }
  return { repaired, unsettled }
}
