import { test, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { loadConfigFile, parseConfig } from '../features.js'

const root = fileURLToPath(new URL('../../../', import.meta.url))

/** Asserts that `yaml` is refused with a line naming `key`. */
function rejects(t: TestContext, yaml: string, key: string, words: RegExp): void {
  t.assert.throws(
    () => parseConfig(yaml, '/etc/filterd/test.yaml'),
    (err: Error & { code?: string }) => {
      t.assert.strictEqual(err.code, 'ENGINE_CONFIG_INVALID')
      const line = err.message.split('\n').find((l) => l.includes(`test.yaml: ${key}`))
      t.assert.ok(line !== undefined, `no line names ${key}:\n${err.message}`)
      t.assert.match(line, words)
      return true
    }
  )
}

test('the shipped demo and production examples are accepted', (t: TestContext) => {
  const demo = loadConfigFile(`${root}conf/demo.yaml`)
  const prod = loadConfigFile(`${root}conf/filterd.example.yaml`)
  t.assert.strictEqual(demo.proxy.listen.length, 2, 'demo listens on two addresses')
  t.assert.strictEqual(prod.proxy['blockpage-ip'].length, 2, 'example has two blockpage-ip')
})

test('two roles on one port of one address are refused; beyond blockpage and api, sections count when the file has them', (t: TestContext) => {
  rejects(
    t,
    'blockpage:\n  listen: 0.0.0.0:80\nlocal:\n  listen: 0.0.0.0:80\n',
    'local.listen',
    /must differ from blockpage\.listen/
  )
  rejects(
    t,
    'blockpage: {}\ncatapi:\n  anon-listen: 10.0.0.1:80\n',
    'catapi.anon-listen',
    /must differ from blockpage\.listen/
  )
  rejects(t, 'api: {}\ncollector:\n  listen: 127.0.0.1:8080\n', 'collector.listen', /must differ from api\.listen/)
  // The replica follower's /health and /metrics listener counts too.
  rejects(t, 'api:\n  listen: 127.0.0.1:8095\nsync: {}\n', 'sync.listen', /must differ from api\.listen/)
  rejects(
    t,
    'sync:\n  listen: 0.0.0.0:9000\ncollector:\n  listen: 127.0.0.1:9000\n',
    'sync.listen',
    /must differ from collector\.listen/
  )
  // The defaults alone (blockpage and local both on 0.0.0.0:80) are fine, and so is the container's
  // config: local's default is the container's port 80.
  parseConfig('', '/x.yaml')
  parseConfig('local:\n  listen: 0.0.0.0:80\n', '/x.yaml')
  parseConfig(
    'local:\n  listen: 0.0.0.0:8085\ncatapi:\n  listen: 10.0.0.1:8081\n  anon-listen: 10.0.0.2:8081\n',
    '/x.yaml'
  )
})

test('an empty file gets every default and a frozen object', (t: TestContext) => {
  const c = parseConfig('', '/etc/filterd/empty.yaml')
  t.assert.deepStrictEqual(c.proxy.listen, ['0.0.0.0:53'])
  t.assert.strictEqual(c.proxy.pid, '/run/filterd/proxy.pid')
  t.assert.deepStrictEqual(c.datafiles.file, ['custom.txt', 'vendor.txt'])
  t.assert.strictEqual(c.api.listen, '127.0.0.1:8080')
  t.assert.ok(Object.isFrozen(c.proxy.listen))
})

test('proxy.listen repeats, and a single scalar reads as a list', (t: TestContext) => {
  const c = parseConfig('proxy:\n  listen: 127.0.0.1:5300\n', '/x.yaml')
  t.assert.deepStrictEqual(c.proxy.listen, ['127.0.0.1:5300'])
  const many = parseConfig('proxy:\n  listen: [127.0.0.1:1, "[::1]:2", 10.0.0.1:3, 10.0.0.2:4]\n', '/x.yaml')
  t.assert.strictEqual(many.proxy.listen.length, 4)
})

test('a bad listen address is refused naming the key and index', (t: TestContext) => {
  rejects(t, 'proxy:\n  listen: [127.0.0.1:53, "999.1.1.1:53"]\n', 'proxy.listen[1]', /not an IP address/)
  rejects(t, 'proxy:\n  listen: ["127.0.0.1:70000"]\n', 'proxy.listen[0]', /port/)
})

test('more than two blockpage-ip keys are refused', (t: TestContext) => {
  rejects(t, 'proxy:\n  blockpage-ip: [192.0.2.1, "2001:db8::1", 192.0.2.2]\n', 'proxy.blockpage-ip', /more than 2/)
})

test('two blockpage-ip of the same IP version are refused', (t: TestContext) => {
  rejects(t, 'proxy:\n  blockpage-ip: [192.0.2.1, 192.0.2.2]\n', 'proxy.blockpage-ip[1]', /one per IP version/)
  rejects(t, 'proxy:\n  blockpage-ip: [192.0.2.1, not-an-ip]\n', 'proxy.blockpage-ip[1]', /not an IP address/)
})

test('log and pid must be absolute paths', (t: TestContext) => {
  rejects(t, 'api:\n  log: logs/api.log\n', 'api.log', /absolute/)
  rejects(t, 'blockpage:\n  pid: run/bp.pid\n', 'blockpage.pid', /absolute/)
  const c = parseConfig('api:\n  log: "-"\n', '/x.yaml')
  t.assert.strictEqual(c.api.log, '-')
})

test('the block page must not listen where the API listens', (t: TestContext) => {
  rejects(
    t,
    'blockpage:\n  listen: 127.0.0.1:8080\napi:\n  listen: 127.0.0.1:8080\n',
    'blockpage.listen',
    /differ from api.listen/
  )
  rejects(t, 'blockpage:\n  listen: 0.0.0.0:9000\napi:\n  listen: 127.0.0.1:9000\n', 'blockpage.listen', /differ/)
  parseConfig('blockpage:\n  listen: 127.0.0.1:8080\napi:\n  listen: 127.0.0.1:8081\n', '/x.yaml')
})

test('unknown keys and wrong types are refused naming the key', (t: TestContext) => {
  rejects(t, 'proxy:\n  listne: [127.0.0.1:53]\n', 'proxy.listne', /unknown key/)
  rejects(t, 'proxy:\n  ttl: lots\n', 'proxy.ttl', /integer/)
  rejects(t, 'proxy:\n  policy-cache-addresses: 0\n', 'proxy.policy-cache-addresses', />= 1/)
  rejects(t, 'proxy:\n  policy-cache-addresses: 2.5\n', 'proxy.policy-cache-addresses', /integer/)
  rejects(t, 'datafiles:\n  language: fr\n', 'datafiles.language', /one of "ru", "en"/)
  rejects(t, 'api:\n  access: ["permit 10.0.0.0/8"]\n', 'api.access[0]', /pattern/)
  rejects(t, 'api:\n  access: ["allow 10.0.0.0/33"]\n', 'api.access', /not an address or prefix/)
})

test('a repeated key in YAML is refused rather than silently dropped', (t: TestContext) => {
  t.assert.throws(() => parseConfig('proxy:\n  ttl: 1\n  ttl: 2\n', '/x.yaml'), /line 3/)
})

test('${CONFIG_DIR} and environment references expand, relative paths anchor at the file', (t: TestContext) => {
  const c = parseConfig(
    'common:\n  db: db\nproxy:\n  pid: ${CONFIG_DIR}/run/dns.pid\nlocal:\n  key: ${FILTERD_TEST_KEY}\n',
    '/srv/filterd/conf/f.yaml',
    { FILTERD_TEST_KEY: 'k-123' }
  )
  t.assert.strictEqual(c.common.db, '/srv/filterd/conf/db')
  t.assert.strictEqual(c.proxy.pid, '/srv/filterd/conf/run/dns.pid')
  t.assert.strictEqual(c.local.key, 'k-123')
  rejects(t, 'local:\n  key: ${FILTERD_NOT_SET_ANYWHERE}\n', 'local.key', /FILTERD_NOT_SET_ANYWHERE is not set/)
})

test('a missing file is a read error naming the path', (t: TestContext) => {
  t.assert.throws(
    () => loadConfigFile('/nonexistent/filterd.yaml'),
    (err: Error & { code?: string }) =>
      err.code === 'ENGINE_CONFIG_READ' && err.message.includes('/nonexistent/filterd.yaml')
  )
})
