/**
 * A private clickhouse-server for tests and benchmarks (Debian's `clickhouse-server`, installed by
 * .ci/run): on free loopback ports, with a config generated in its own temp folder, killed by `stop()`.
 * `kill()` and `start()` stop it (SIGKILL) and start it again on the same ports with its data, for the
 * fault tests. With `zookeeper`, the config names that ZooKeeper and the macros `{shard}` and
 * `{replica}` (a one-shard, one-replica cluster `filterd` for the Replicated and Distributed tables).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { releasedPort } from '../../testing/ports.js'
import { makeTempDir } from '../../testing/temp.js'

export const CLICKHOUSE_SERVER = '/usr/sbin/clickhouse-server'

export interface TestClickHouse {
  /** `http://127.0.0.1:<port>`: what `stats.clickhouse.url` names. */
  readonly url: string
  readonly httpPort: number
  readonly tcpPort: number
  readonly dir: string
  /** The cluster name in the config's `remote_servers` (`filterd`). */
  readonly cluster: string
  /** The server process's id while it runs (benchmarks read its CPU time). */
  readonly pid: number | undefined
  /** Stops the server at once (SIGKILL): what a crash or a pulled cable looks like to its clients. */
  kill(): Promise<void>
  /** Starts it again on the same ports, with its data. */
  start(): Promise<void>
  /** Stops it and removes its folder. */
  stop(): Promise<void>
}

export function clickhouseServerAvailable(): boolean {
  return existsSync(CLICKHOUSE_SERVER)
}

/**
 * Why a test that needs a server is skipped here, or false when it runs. Under CI (which installs the
 * server, .ci/run) nothing is skipped: a missing server fails the test rather than passing unseen.
 */
export function skipWithoutClickHouse(): string | false {
  if (clickhouseServerAvailable() || process.env.CI === 'true') return false
  return `no ${CLICKHOUSE_SERVER} (apt-get install clickhouse-server)`
}

function configXml(dir: string, ports: { http: number; tcp: number; interserver: number }, zookeeper?: string): string {
  const zk =
    zookeeper === undefined
      ? ''
      : `<zookeeper><node><host>${zookeeper.split(':')[0]}</host><port>${zookeeper.split(':')[1]}</port></node></zookeeper>
  <macros><shard>01</shard><replica>r1</replica></macros>`
  return `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${dir}/server.log</log><errorlog>${dir}/error.log</errorlog><console>0</console></logger>
  <http_port>${ports.http}</http_port>
  <tcp_port>${ports.tcp}</tcp_port>
  <interserver_http_port>${ports.interserver}</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>${dir}/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <max_concurrent_queries>64</max_concurrent_queries>
  <remote_servers><filterd><shard><internal_replication>true</internal_replication><replica><host>127.0.0.1</host><port>${ports.tcp}</port></replica></shard></filterd></remote_servers>
  ${zk}
</yandex>
`
}

const USERS_XML = `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(2000) })
    return res.ok
  } catch {
    return false
  }
}

/** Starts a server; `zookeeper` is `host:port` of a running ZooKeeper (engine/clickhouse/testing/zookeeper.ts). */
export async function startClickHouse(options: { zookeeper?: string } = {}): Promise<TestClickHouse> {
  const ports = { http: await releasedPort(), tcp: await releasedPort(), interserver: await releasedPort() }
  const { dir, cleanup } = makeTempDir('filterd-clickhouse-')
  for (const d of ['data', 'tmp', 'user_files', 'format_schemas']) mkdirSync(join(dir, d), { recursive: true })
  writeFileSync(join(dir, 'config.xml'), configXml(dir, ports, options.zookeeper))
  writeFileSync(join(dir, 'users.xml'), USERS_XML)
  const url = `http://127.0.0.1:${ports.http}`
  let proc: ChildProcess | undefined
  const start = async (): Promise<void> => {
    const p = spawn(CLICKHOUSE_SERVER, [`--config-file=${join(dir, 'config.xml')}`], {
      stdio: 'ignore',
      cwd: dir
    })
    proc = p
    // A cold start of 18.16 takes a second or two here; generous for a loaded CI machine.
    const deadline = Date.now() + 60_000
    while (!(await answers(url))) {
      if (p.exitCode !== null) throw new Error(`clickhouse-server exited with ${p.exitCode} (see ${dir}/error.log)`)
      if (Date.now() > deadline) throw new Error(`clickhouse-server did not answer within 60 s (see ${dir}/error.log)`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  const kill = async (): Promise<void> => {
    const p = proc
    proc = undefined
    if (p === undefined || p.exitCode !== null) return
    p.kill('SIGKILL')
    await once(p, 'exit')
  }
  await start()
  return {
    url,
    httpPort: ports.http,
    tcpPort: ports.tcp,
    dir,
    cluster: 'filterd',
    get pid() {
      return proc?.pid
    },
    kill,
    start,
    async stop() {
      await kill()
      cleanup()
    }
  }
}
