/**
 * The built-in whitelist: names that are never blocked, whatever the category, user or global
 * lists say (highest priority, spec "filtering-server"). It is compiled into the engine, cannot be
 * edited through the API and is not visible there. docs/builtin-whitelist.md lists it; a test keeps
 * the two in step.
 *
 * Each entry matches the name itself and all of its subdomains. Where a vendor spreads its update
 * servers over many hosts of one domain it owns only for that purpose (kaspersky-labs.com,
 * windowsupdate.com, lencr.org), the whole domain is listed; otherwise the update hosts are.
 *
 * Per packet the DNS engine already has the query's suffix keys (`a.b.example.com`,
 * `b.example.com`, …): `matchKey` is one Set lookup per suffix, no allocation.
 */
import { EngineError } from '../errors.js'
import { normalizeDomain } from '../names/index.js'

export interface WhitelistGroup {
  readonly group: string
  readonly names: readonly string[]
}

/**
 * The product's own hosts. The vendor domain is not fixed in the code: packaging or the config
 * (`vendor-names`) supplies it through `createBuiltinWhitelist(extraVendorNames)`.
 */
export const PRODUCT_HOSTS: readonly string[] = Object.freeze([])

export const BUILTIN_WHITELIST: readonly WhitelistGroup[] = Object.freeze(
  [
    {
      group: 'Antivirus updates',
      names: [
        // Kaspersky
        'kaspersky-labs.com',
        'upd.kaspersky.com',
        'geo.kaspersky.com',
        'ds.kaspersky.com',
        // ESET (LiveGrid uses e5.sk)
        'update.eset.com',
        'repository.eset.com',
        'um01.eset.com',
        'um02.eset.com',
        'um03.eset.com',
        'um04.eset.com',
        'um05.eset.com',
        'um06.eset.com',
        'um07.eset.com',
        'um08.eset.com',
        'um09.eset.com',
        'um10.eset.com',
        'um11.eset.com',
        'um12.eset.com',
        'um13.eset.com',
        'edf.eset.com',
        'ts.eset.com',
        'e5.sk',
        // Dr.Web
        'update.drweb.com',
        'update.drweb.ru',
        'update.drweb.net',
        // Avast / AVG
        'avcdn.net',
        'avast.com',
        'avg.com',
        // Bitdefender
        'upgrade.bitdefender.com',
        'download.bitdefender.com',
        'nimbus.bitdefender.net',
        // Microsoft Defender
        'definitionupdates.microsoft.com',
        'wdcp.microsoft.com',
        'wdcpalt.microsoft.com',
        'wd.microsoft.com',
        'smartscreen.microsoft.com',
        'smartscreen-prod.microsoft.com',
        // Sophos
        'sophosupd.com',
        'sophosupd.net',
        'sophosxl.net',
        // Norton / Symantec
        'symantecliveupdate.com',
        'liveupdate.symantec.com',
        'norton.com',
        // McAfee, Trend Micro, Malwarebytes, F-Secure, ClamAV
        'update.nai.com',
        'mcafee.com',
        'activeupdate.trendmicro.com',
        'data-cdn.mbamupdates.com',
        'mwbsys.com',
        'f-secure.com',
        'database.clamav.net'
      ]
    },
    {
      group: 'Operating system updates',
      names: [
        // Windows and Office
        'windowsupdate.com',
        'download.windowsupdate.com',
        'windowsupdate.microsoft.com',
        'update.microsoft.com',
        'wustat.windows.com',
        'ntservicepack.microsoft.com',
        'delivery.mp.microsoft.com',
        'emdl.ws.microsoft.com',
        'download.microsoft.com',
        'officecdn.microsoft.com',
        // Apple
        'swcdn.apple.com',
        'swscan.apple.com',
        'swdist.apple.com',
        'swdownload.apple.com',
        'mesu.apple.com',
        'updates.cdn-apple.com',
        'updates-http.cdn-apple.com',
        'gdmf.apple.com',
        'xp.apple.com',
        'appldnld.apple.com',
        'osrecovery.apple.com',
        'oscdn.apple.com',
        // Linux distributions
        'deb.debian.org',
        'security.debian.org',
        'ftp.debian.org',
        'archive.ubuntu.com',
        'security.ubuntu.com',
        'ports.ubuntu.com',
        'changelogs.ubuntu.com',
        'api.snapcraft.io',
        'mirrors.fedoraproject.org',
        'dl.fedoraproject.org',
        'download.fedoraproject.org',
        'mirrorlist.centos.org',
        'dl.rockylinux.org',
        'repo.almalinux.org',
        'download.opensuse.org',
        'dl-cdn.alpinelinux.org',
        'geo.mirror.pkgbuild.com',
        // Android, Chrome and Firefox updates
        'android.clients.google.com',
        'dl.google.com',
        'update.googleapis.com',
        'aus5.mozilla.org',
        'download.mozilla.org'
      ]
    },
    {
      group: 'Certificate revocation (OCSP and CRL)',
      names: [
        'ocsp.digicert.com',
        'crl3.digicert.com',
        'crl4.digicert.com',
        'cacerts.digicert.com',
        'pki.goog',
        'lencr.org',
        'ocsp.sectigo.com',
        'crl.sectigo.com',
        'ocsp.usertrust.com',
        'crl.usertrust.com',
        'ocsp.comodoca.com',
        'crl.comodoca.com',
        'ocsp.globalsign.com',
        'ocsp2.globalsign.com',
        'crl.globalsign.com',
        'ocsp.entrust.net',
        'crl.entrust.net',
        'ocsp.godaddy.com',
        'crl.godaddy.com',
        'ocsp.apple.com',
        'crl.apple.com',
        'ocsp.msocsp.com',
        'oneocsp.microsoft.com',
        'crl.microsoft.com',
        'amazontrust.com',
        'ocsp.identrust.com',
        'crl.identrust.com'
      ]
    },
    {
      group: 'Time and connectivity checks',
      names: [
        'pool.ntp.org',
        'time.windows.com',
        'time.apple.com',
        'time.google.com',
        'connectivitycheck.gstatic.com',
        'connectivitycheck.android.com',
        'captive.apple.com',
        'msftconnecttest.com',
        'msftncsi.com',
        'detectportal.firefox.com',
        'nmcheck.gnome.org',
        'network-test.debian.org',
        'connectivity-check.ubuntu.com'
      ]
    }
  ].map((g) => Object.freeze({ group: g.group, names: Object.freeze(g.names) }))
)

export interface BuiltinWhitelist {
  /** Every key of the whitelist, sorted (product hosts, vendor names, the compiled lists). */
  readonly keys: readonly string[]
  /** Exact key in the set: call it with each suffix key the engine already computed. */
  matchKey(key: string): boolean
  /** True if any of the given suffix keys is whitelisted. */
  matchesSuffixKeys(keys: readonly string[]): boolean
  /** Normalises `name` and tests it and each of its parents (slow path: tools, API, tests). */
  has(name: string): boolean
}

/**
 * Builds the built-in whitelist from the compiled lists plus the vendor's names from the config.
 * An invalid vendor name throws `ENGINE_CONFIG_INVALID` naming it.
 *
 * @example createBuiltinWhitelist(['filter.isp.example']).has('www.filter.isp.example') === true
 */
export function createBuiltinWhitelist(extraVendorNames: readonly string[] = []): BuiltinWhitelist {
  const set = new Set<string>()
  for (const name of PRODUCT_HOSTS) set.add(name)
  for (const { names } of BUILTIN_WHITELIST) for (const name of names) set.add(name)
  for (const raw of extraVendorNames) {
    const name = normalizeDomain(raw)
    if (name === undefined)
      throw new EngineError('ENGINE_CONFIG_INVALID', `vendor-names: ${JSON.stringify(raw)} is not a valid domain name`)
    set.add(name)
  }
  const keys = Object.freeze([...set].sort())
  const matchKey = (key: string): boolean => set.has(key)
  return Object.freeze({
    keys,
    matchKey,
    matchesSuffixKeys(suffixKeys: readonly string[]): boolean {
      for (let i = 0; i < suffixKeys.length; i++) if (set.has(suffixKeys[i]!)) return true
      return false
    },
    has(input: string): boolean {
      const name = normalizeDomain(input)
      if (name === undefined) return false
      // Walk the parents in place: `a.b.c` → `b.c` → `c`, without building the suffix array.
      for (let i = 0; ;) {
        if (set.has(i === 0 ? name : name.slice(i))) return true
        const dot = name.indexOf('.', i)
        if (dot === -1) return false
        i = dot + 1
      }
    }
  })
}
