// The store both schedule benchmarks fill (schedule.bench.ts in one process, schedule-e2e-setup.ts
// for the real DNS server): a 100,000-name category table, and USERS users without schedules beside
// USERS users each with one scheduled rule, all filtering gambling. The callers choose the addresses
// and the rule.
import { CATEGORY } from '../../engine/categories/index.js'
import { CategoryDbBuilder } from '../../engine/catdb/index.js'
import type { ScheduledRule } from '../../engine/schedule/index.js'
import type { Store, UserRecord } from '../../engine/store/index.js'

/** Names `site<i>.example`: one in eight gambling, one in eight social networks, the rest news. */
const SITES = 100_000
/** Users per store transaction. */
const BATCH = 5000

/** Plain user i is `p<i>`, scheduled user i is `s<i>` (with `rule(i)`), at `address(scheduled, i)`. */
export async function fillScheduleStore(
  store: Store,
  users: number,
  address: (scheduled: boolean, i: number) => string,
  rule: (i: number) => ScheduledRule
): Promise<void> {
  const b = await CategoryDbBuilder.begin(store)
  for (let i = 0; i < SITES; i++) {
    const cat = i % 8 === 0 ? CATEGORY.GAMBLING : i % 8 === 1 ? CATEGORY.SOCIAL_NETWORKS : CATEGORY.NEWS
    await b.put(`site${i}.example`, false, [cat])
  }
  await b.commit()
  for (let start = 0; start < users; start += BATCH) {
    await store.write((w) => {
      for (let i = start; i < Math.min(users, start + BATCH); i++) {
        for (const scheduled of [false, true]) {
          const name = `${scheduled ? 's' : 'p'}${i}`
          const user: UserRecord = { ...store.newUser(name), filter: [CATEGORY.GAMBLING], ip: [address(scheduled, i)] }
          if (scheduled) user.schedules = [rule(i)]
          w.putUser(user)
          w.claimAddresses(name, user.ip)
        }
      }
    })
  }
}
