// A store for tests, seeded with categories and users: the one copy every test and role helper uses.
import { CategoryDbBuilder, type BuilderOptions } from '../catdb/index.js'
import { Store, type UserRecord } from '../store/index.js'
import { makeTempDir, type Cleanup } from './temp.js'

/** A store in a fresh temp folder, closed and removed after the test. */
export function tempStore(t: Cleanup, prefix = 'filterd-store-'): { store: Store; path: string } {
  const { dir: path, cleanup } = makeTempDir(prefix)
  const store = Store.open(path)
  t.after(async () => {
    await store.close()
    cleanup()
  })
  return { store, path }
}

/** A category entry: a domain, or with 'url' a URL entry. */
export type CatEntry = [key: string, cats: number[]] | [key: string, cats: number[], kind: 'url']

/** Builds and activates a category database of `entries` (a domain → categories map, or entries). */
export async function buildCats(
  store: Store,
  entries: Record<string, number[]> | readonly CatEntry[],
  options: BuilderOptions = {}
): Promise<void> {
  const list: readonly CatEntry[] = Array.isArray(entries) ? entries : Object.entries(entries)
  const b = await CategoryDbBuilder.begin(store, options)
  for (const [key, cats, kind] of list) await b.put(key, kind === 'url', cats)
  await b.commit()
}

/** Writes a user (over the store's new-user defaults), claims its addresses, and sets its lists. */
export async function addUser(
  store: Store,
  user: Partial<UserRecord> & { name: string },
  lists: { white?: string[]; black?: string[] } = {}
): Promise<void> {
  await store.write((w) => {
    const u = { ...store.newUser(user.name), ...user }
    w.putUser(u)
    w.claimAddresses(u.name, u.ip)
    if (u.client_ids !== undefined) w.setClientIds(u.name, u.client_ids)
    if (lists.white !== undefined) w.putList(u.name, 'white', lists.white)
    if (lists.black !== undefined) w.putList(u.name, 'black', lists.black)
  })
}
