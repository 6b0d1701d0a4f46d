/** A refused usage report names what is wrong with it in `field`, as every HTTP role's error body does. */
import { test, type TestContext } from 'node:test'
import { setup, startRole } from '../local/testing/harness.js'

test('a refused report or count names its field: body, counter_cat, counter_unknown_cat, count', async (t: TestContext) => {
  const s = setup(t, ['key-a'])
  s.writeData('porn.example\t1\n')
  const c = await startRole(t, 'collector', s.collectorConfig())
  const post = async (
    type: string,
    body: string
  ): Promise<{ status: number; error: { code: string; field?: string } }> => {
    const res = await fetch(`${c.url}/report`, { method: 'POST', headers: { 'content-type': type }, body })
    return { status: res.status, error: ((await res.json()) as { error: { code: string; field?: string } }).error }
  }
  const json = 'application/json'
  t.assert.deepStrictEqual(await post(json, 'null'), {
    status: 400,
    error: { code: 'COLLECTOR_BAD_REPORT', message: 'expected a JSON object', field: 'body' }
  })
  const cases: Array<[string, string]> = [
    ['{"key":"key-a","counter_cat":"x","counter_unknown_cat":[]}', 'counter_cat'],
    ['{"key":"key-a","counter_cat":[1],"counter_unknown_cat":[-1]}', 'counter_unknown_cat']
  ]
  for (const [body, field] of cases) {
    const r = await post(json, body)
    t.assert.deepStrictEqual([r.status, r.error.code, r.error.field], [400, 'COLLECTOR_BAD_REPORT', field], body)
  }
  const count = await post('application/x-www-form-urlencoded', 'key=key-a&count=many')
  t.assert.deepStrictEqual([count.status, count.error.code, count.error.field], [400, 'COLLECTOR_BAD_COUNT', 'count'])
})
