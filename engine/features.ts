/**
 * The features whose config the loader checks, and the loaders with them: what every entry point
 * (the CLI, the container's health check, tests and benchmarks) reads a config file through. The
 * config core (engine/config) knows no feature; a feature with rules a schema cannot say adds its
 * check here, and every load runs it.
 *
 * Features switch on one way each, by the shape of their section (docs/config.md says which):
 * dnstap by the presence of `proxy.dnstap`, list subscriptions by a non-empty `lists.sources`,
 * RPZ feeds by a non-empty `rpz-feeds.feeds`, encrypted DNS by its listen keys.
 */
import {
  checkConfigFile as checkConfigFileWith,
  loadConfigFile as loadConfigFileWith,
  parseConfig as parseConfigWith,
  type FeatureCheck
} from './config/index.js'
import type { Config } from './config/index.js'
import { parseDnstapTarget } from './dnstap/index.js'
import { configSourceProblems } from './lists/index.js'
import { feedConfigProblems, rpzFeedMetrics } from './rpz-feeds/index.js'
import type { SnapshotMetrics } from './metrics/index.js'
import { dnsCounterMetrics } from './metrics/index.js'
import { certificateMetrics } from './tls/index.js'

function dnstapProblems(config: Readonly<Config>): string[] {
  if (config.proxy.dnstap === undefined) return []
  const t = parseDnstapTarget(config.proxy.dnstap)
  return 'problem' in t ? [`proxy.dnstap: ${t.problem}`] : []
}

export const FEATURE_CHECKS: readonly FeatureCheck[] = [
  dnstapProblems,
  (config) => configSourceProblems(config.lists.sources),
  feedConfigProblems
]

/** Reads, validates and freezes the config file at `file` (engine/config/load.ts), features checked. */
export function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  return loadConfigFileWith(file, FEATURE_CHECKS, env)
}

/** `filterd check-config`: the load, then the files and folders the config refers to. */
export function checkConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  return checkConfigFileWith(file, FEATURE_CHECKS, env)
}

/** Validates config text; `path` names the file in messages and anchors relative paths. */
export function parseConfig(text: string, path: string, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  return parseConfigWith(text, path, FEATURE_CHECKS, env)
}

/**
 * The features whose part of a DNS process's snapshot /metrics shows, each registering its own
 * metrics (engine/metrics): the api role's /metrics and the dns role's `proxy.metrics-listen` serve
 * this list.
 */
export const DNS_SNAPSHOT_METRICS: readonly SnapshotMetrics[] = [dnsCounterMetrics, rpzFeedMetrics, certificateMetrics]
