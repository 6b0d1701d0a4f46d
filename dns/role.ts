/*
 * `filterd dns`: the role entry (engine/role.ts contract).
 *
 * `proxy.processes: 1` runs the server in this process. With N > 1 this process becomes a
 * node:cluster primary that forks N front processes (./cluster-worker.js); on Node 20 the
 * children share the primary's UDP socket handle (the kernel wakes one reader per datagram) and
 * the primary hands TCP connections round-robin. The children get the validated config through
 * the environment, not by reading the file again, so they cannot disagree with the primary.
 * A child that dies is forked again (at most once a second).
 */
import cluster, { type Worker } from 'node:cluster'
import { fileURLToPath } from 'node:url'
import { startWithStack, type RoleContext, type RoleStack, type RunningRole } from '../engine/role.js'
import type { QueryLogSink, QueryLogSinkFactory } from '../engine/querylog/index.js'
import { formatHostPort, parseHostPort } from '../engine/config/index.js'
import { createHttpServer } from '../engine/http/index.js'
import { metricsDir, readSnapshots, registerMetricsRoute, startMetricsPublisher } from '../engine/metrics/index.js'
import { DNS_SNAPSHOT_METRICS } from '../engine/features.js'
import { DnsMetrics, type DnsSnapshot } from './metrics.js'
import { healthReport, registerHealthRoute, storeGeneration, type HealthProblem } from '../engine/health/index.js'
import type { HealthReport } from '../engine/health/index.js'
import type { Config } from '../engine/config/index.js'
import { createQueryLogSink } from '../engine/querylog/index.js'
import { raiseToRealtime } from '../engine/cpu-priority/index.js'
import { startDnsServer } from './server.js'
import { startFeedsChild, type FeedsChild } from './feeds-child.js'
import { restartOnDeath, stopChild, untilReady } from './child-protocol.js'
import { resolverProblems } from './resolver-health.js'
import { certificateProblems } from '../engine/tls/index.js'

export interface DnsRoleOptions {
  /**
   * Creates the statistics sink of a single-process server (default: the CSV query log). A
   * function cannot cross into `proxy.processes` children: they always write the CSV query log.
   */
  querylog?: QueryLogSinkFactory
}

export const ENV_CONFIG = 'FILTERD_DNS_CONFIG'
export const ENV_INDEX = 'FILTERD_DNS_INDEX'

/** The sink: an injected factory, else the product's CSV query log (engine/stats; a no-op when `stats.enabled` is off). */
export async function createSink(
  ctx: RoleContext,
  options: DnsRoleOptions,
  processIndex: number
): Promise<QueryLogSink> {
  const factory = options.querylog ?? createQueryLogSink
  return await factory({ ...ctx, processIndex })
}

/**
 * One front process: its statistics sink, its metrics (published for the api role's /metrics)
 * and its server. The single-process role and every cluster child run exactly this.
 */
export async function startFrontProcess(
  ctx: RoleContext,
  options: DnsRoleOptions,
  processIndex: number
): Promise<RunningRole> {
  await takeRealtimePriority(ctx, processIndex) // before the server: the threads it starts inherit the policy
  return await startWithStack(async (stack) => {
    const querylog = await createSink(ctx, options, processIndex)
    stack.defer(() => querylog?.close?.())
    const metrics = new DnsMetrics()
    const server = stack.own(
      await startDnsServer({
        config: ctx.config,
        logger: ctx.logger,
        metrics,
        ...(querylog === undefined ? {} : { querylog })
      })
    )
    const counts = querylog as Partial<{ writtenRows: number; droppedRows: number }> | undefined
    stack.own(
      startMetricsPublisher(ctx.config, metrics, {
        index: processIndex,
        ...(typeof counts?.writtenRows === 'number'
          ? { queryLog: counts as { writtenRows: number; droppedRows: number } }
          : {})
      })
    )
    stack.endpoints.push(...server.endpoints)
    return {
      reload: async (config, keys) => {
        await server.reload(config, keys)
      },
      health() {
        const problems: HealthProblem[] = []
        const generation = storeGeneration(() => server.generation() ?? -1, problems)
        problems.push(...resolverProblems([metrics.resolvers()]))
        problems.push(...certificateProblems(metrics.tlsCerts(), ctx.config.common['tls-cert-warn-days']))
        return healthReport({
          role: 'dns',
          listeners: server.endpoints,
          problems,
          ...(generation === undefined || generation < 0 ? {} : { generation })
        })
      }
    }
  })
}

/**
 * `proxy.realtime-priority`: this front process answers at SCHED_FIFO (engine/cpu-priority/realtime.ts). A refusal
 * (no CAP_SYS_NICE, no chrt, a container that forbids it) is told once and the process answers at normal
 * priority: a lower priority never stops DNS.
 */
async function takeRealtimePriority(ctx: RoleContext, processIndex: number): Promise<void> {
  const priority = ctx.config.proxy['realtime-priority']
  if (priority === 0 || process.platform !== 'linux') return
  try {
    await raiseToRealtime(priority)
    ctx.logger.info(
      { priority, processIndex },
      'dns: answering at real-time priority (SCHED_FIFO, proxy.realtime-priority)'
    )
  } catch (err) {
    ctx.logger.warn(
      { err, priority, processIndex },
      'dns: cannot take real-time priority (proxy.realtime-priority needs root or CAP_SYS_NICE, and chrt): answering at normal priority'
    )
  }
}

export async function startRole(ctx: RoleContext, options: DnsRoleOptions = {}): Promise<RunningRole> {
  return await startWithStack(async (stack) => {
    const processes = ctx.config.proxy.processes
    // Before the front processes: they start with every feed's first load in the store.
    const feeds = await followFeeds(ctx, stack)
    const role = stack.own(
      processes <= 1 || !cluster.isPrimary
        ? await startFrontProcess(ctx, options, 0)
        : await startCluster(ctx, processes)
    )
    stack.endpoints.push(...role.endpoints, ...(feeds?.endpoints ?? []))
    await serveMetricsListener(ctx, role, stack)
    return {
      reload: async (config, keys) => {
        feeds?.reload(config)
        await role.reload?.(config, keys)
      },
      ...(role.health === undefined ? {} : { health: () => role.health!() })
    }
  })
}

/**
 * `rpz-feeds`: this role is the one on the host that transfers the feeds and binds `notify-listen`,
 * in a child process of its own at background priority (./feeds-child.ts). The dns role is the one
 * every deployment with feeds runs (a feed is enforced by answering queries), and it runs once per
 * host, also under `filterd all`. Null when the config has no feeds.
 */
async function followFeeds(ctx: RoleContext, stack: RoleStack): Promise<FeedsChild | null> {
  if (ctx.config['rpz-feeds'].feeds.length === 0) return null
  const feeds = await startFeedsChild(ctx)
  stack.defer(() => feeds.close())
  return feeds
}

/**
 * `proxy.metrics-listen`: GET /metrics of every front process (their snapshots in stats.dir, as the
 * api role reads them), served by this process on its own small node:http listener, so a host that
 * runs only the DNS role is observable. Off unless set.
 */
async function serveMetricsListener(ctx: RoleContext, role: RunningRole, stack: RoleStack): Promise<void> {
  const listen = ctx.config.proxy['metrics-listen']
  if (listen === undefined) return
  const http = createHttpServer({
    impl: 'node',
    bodyLimit: 1024,
    logger: {
      warn: (m) => {
        ctx.logger.warn(m)
      }
    }
  })
  registerMetricsRoute(http, { config: ctx.config, defaultPrefix: 'filterd_dns_', parts: DNS_SNAPSHOT_METRICS })
  const hp = parseHostPort(listen)
  registerHealthRoute(http, async () => {
    const inner = await role.health?.()
    return healthReport({
      ...inner,
      role: 'dns',
      listeners: stack.endpoints,
      problems: inner?.degraded ?? [],
      ...(inner?.generation === undefined ? {} : { generation: inner.generation })
    })
  })
  const { port } = await http.listen(hp.host, hp.port)
  stack.own(http)
  stack.endpoints.push(`dns metrics http ${formatHostPort({ host: hp.host, port })} (/metrics, /health)`)
}

/** Sends a reload to one front process, which applies the live keys itself (cluster-worker.ts) and answers. */
function reloadFront(w: Worker, config: Readonly<Config>, keys: readonly string[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onMessage = (m: { type?: string; error?: string }): void => {
      if (m.type !== 'dns-reloaded') return
      w.off('message', onMessage)
      if (m.error === undefined) resolve()
      else reject(new Error(m.error))
    }
    w.on('message', onMessage)
    w.send({ type: 'dns-reload', config, keys })
  })
}

/** The health of the front processes (`running()` of `processes`), from the snapshots each publishes. */
async function clusterHealth(
  config: Readonly<Config>,
  shown: readonly string[],
  running: () => number,
  processes: number
): Promise<HealthReport> {
  // Each front process forwards on its own; their published snapshots say how their resolvers are.
  const snapshots = await readSnapshots<DnsSnapshot>(metricsDir(config))
  const alive = running()
  const problems: HealthProblem[] =
    alive < processes
      ? [
          {
            what: 'processes',
            why: `${alive} of ${processes} front processes running (proxy.processes); a dead one is started again`
          }
        ]
      : []
  problems.push(...resolverProblems([...snapshots.values()].map((s) => s.resolvers ?? [])))
  // Every front process serves the same files: the first snapshot that has them says.
  const certs = [...snapshots.values()].find((s) => (s.tlsCerts ?? []).length > 0)?.tlsCerts ?? []
  problems.push(...certificateProblems(certs, config.common['tls-cert-warn-days']))
  return healthReport({ role: 'dns', listeners: shown, problems, extra: { processes: alive } })
}

async function startCluster(ctx: RoleContext, processes: number): Promise<RunningRole> {
  cluster.setupPrimary({
    exec: fileURLToPath(new URL('./cluster-worker.js', import.meta.url)),
    args: [],
    silent: false
  })
  let stopping = false
  const workers = new Set<Worker>()
  let endpoints: readonly string[] = []
  // The config the front processes run: a reload's live keys replace their values here too, so a
  // process forked again after a reload starts with them.
  let current: Readonly<Config> = ctx.config
  const fork = async (index: number): Promise<Worker> => {
    const w = cluster.fork({ [ENV_CONFIG]: JSON.stringify(current), [ENV_INDEX]: String(index) })
    workers.add(w)
    w.on('exit', () => workers.delete(w))
    restartOnDeath(
      w,
      'dns front process',
      () => stopping,
      () => fork(index),
      ctx.logger,
      { index }
    )
    endpoints = await untilReady(w, 'dns front process')
    return w
  }
  try {
    for (let i = 1; i <= processes; i++) await fork(i)
  } catch (err) {
    stopping = true
    for (const w of workers) w.kill('SIGKILL')
    throw err
  }
  // logrotate signals the pid in proxy.pid (this primary); the children write the log file too, and
  // read their TLS certificate again on it (./encrypted-fronts.ts).
  const forwardHup = (): void => {
    if (ctx.config.proxy.log !== '-' || ctx.config.proxy['tls-cert'] !== undefined)
      for (const w of workers) w.process.kill('SIGHUP')
  }
  process.on('SIGHUP', forwardHup)
  const shown = endpoints.map((e) => `${e} (${processes} processes)`)
  return {
    endpoints: shown,
    async reload(config, keys) {
      current = config
      // Each front process applies them itself (cluster-worker.ts) and answers; a failure is the reload's.
      await Promise.all([...workers].map((w) => reloadFront(w, config, keys)))
    },
    health: () => clusterHealth(ctx.config, shown, () => workers.size, processes),
    async close() {
      stopping = true
      process.off('SIGHUP', forwardHup)
      await Promise.all([...workers].map(stopChild))
    }
  }
}
