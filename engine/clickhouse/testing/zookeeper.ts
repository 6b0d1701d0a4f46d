/**
 * A private ZooKeeper for the Replicated tables' tests (Debian's `zookeeper` 3.8, installed by .ci/run):
 * one standalone server on a free loopback port, with its config, data and log in its own temp folder,
 * killed by `stop()`. It runs the server class straight from Debian's jars rather than through
 * zkServer.sh, which reads /etc/zookeeper and writes /var/log/zookeeper; the heap is kept small, as the
 * test machine is shared.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { releasedPort } from '../../testing/ports.js'
import { makeTempDir } from '../../testing/temp.js'

const JARS = '/usr/share/java'
/** zookeeper.jar's manifest names its other jars; the logging binding is ours to add. */
const CLASSPATH = ['zookeeper.jar', 'slf4j-log4j12.jar', 'log4j-1.2.jar'].map((j) => join(JARS, j)).join(':')
const JAVA = '/usr/bin/java'

export interface TestZooKeeper {
  /** `127.0.0.1:<port>`: what the ClickHouse config's `<zookeeper>` names. */
  readonly address: string
  readonly port: number
  readonly dir: string
  /** Stops it (SIGKILL) and removes its folder. */
  stop(): Promise<void>
}

export function zookeeperAvailable(): boolean {
  return existsSync(join(JARS, 'zookeeper.jar')) && existsSync(JAVA)
}

/** Why a test that needs ZooKeeper is skipped here, or false when it runs (never skipped under CI). */
export function skipWithoutZooKeeper(): string | false {
  if (zookeeperAvailable() || process.env.CI === 'true') return false
  return `no ${JARS}/zookeeper.jar or ${JAVA} (apt-get install zookeeper)`
}

/** ZooKeeper's "are you ok" four-letter word: `imok` once it serves clients. */
async function imok(port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    let answer = ''
    const s = createConnection({ host: '127.0.0.1', port }, () => s.write('ruok'))
    s.setTimeout(2000, () => s.destroy())
    s.on('data', (d) => (answer += d.toString()))
    s.on('close', () => resolve(answer === 'imok'))
    s.on('error', () => resolve(false))
  })
}

export async function startZooKeeper(): Promise<TestZooKeeper> {
  const port = await releasedPort()
  const { dir, cleanup } = makeTempDir('filterd-zookeeper-')
  mkdirSync(join(dir, 'data'))
  writeFileSync(
    join(dir, 'zoo.cfg'),
    [
      'tickTime=2000',
      `dataDir=${dir}/data`,
      `clientPort=${port}`,
      'clientPortAddress=127.0.0.1',
      // No admin web server (it would take port 8080) and no snapshots kept beyond the minimum.
      'admin.enableServer=false',
      'autopurge.snapRetainCount=3',
      '4lw.commands.whitelist=ruok,srvr',
      ''
    ].join('\n')
  )
  writeFileSync(
    join(dir, 'log4j.properties'),
    [
      'log4j.rootLogger=WARN, F',
      'log4j.appender.F=org.apache.log4j.FileAppender',
      `log4j.appender.F.File=${dir}/zookeeper.log`,
      'log4j.appender.F.layout=org.apache.log4j.PatternLayout',
      'log4j.appender.F.layout.ConversionPattern=%d %p %c: %m%n',
      ''
    ].join('\n')
  )
  const proc: ChildProcess = spawn(
    JAVA,
    [
      '-Xmx256m',
      '-XX:+UseSerialGC',
      `-Dlog4j.configuration=file:${dir}/log4j.properties`,
      '-cp',
      CLASSPATH,
      'org.apache.zookeeper.server.ZooKeeperServerMain',
      join(dir, 'zoo.cfg')
    ],
    { stdio: 'ignore', cwd: dir }
  )
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = once(proc, 'exit')
      proc.kill('SIGKILL')
      await exited
    }
    cleanup()
  }
  // The JVM starts in a second or two here; generous for a loaded CI machine.
  const deadline = Date.now() + 60_000
  while (!(await imok(port))) {
    const log = (): string => {
      try {
        return readFileSync(join(dir, 'zookeeper.log'), 'utf8').slice(-2000)
      } catch {
        return ''
      }
    }
    if (proc.exitCode !== null) {
      const text = log()
      await stop()
      throw new Error(`ZooKeeper exited with ${proc.exitCode}: ${text}`)
    }
    if (Date.now() > deadline) {
      const text = log()
      await stop()
      throw new Error(`ZooKeeper did not answer ruok within 60 s: ${text}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return { address: `127.0.0.1:${port}`, port, dir, stop }
}
