/**
 * Category numbers other modules name in code (safe search, safe video, the demo, tests).
 * They mirror conf/catgroups*.json; taxonomy.test.ts checks each against the files.
 * Numbers never change (docs/categories.md).
 */
export const CATEGORY = Object.freeze({
  NON_EXISTING_DOMAIN: 0,
  PORNOGRAPHY: 1,
  EROTICA: 2,
  MALWARE: 10,
  PHISHING: 11,
  BOTNETS: 12,
  CRYPTOJACKING: 13,
  FRAUD: 14,
  PROXIES: 20,
  VPN: 21,
  DOH_RESOLVERS: 22,
  GAMBLING: 30,
  DRUGS: 31,
  VIOLENCE: 33,
  WEAPONS: 34,
  SOCIAL_NETWORKS: 40,
  MESSENGERS: 41,
  DATING: 45,
  VIDEO_STREAMING: 50,
  GAMES: 52,
  TORRENTS: 60,
  PIRACY: 61,
  ADVERTISING: 70,
  TRACKERS: 71,
  SEARCH_ENGINES: 80,
  NEWS: 81,
  EDUCATION: 83,
  GOVERNMENT: 85,
  SHOPPING: 90,
  BANKING: 91,
  SOFTWARE_UPDATES: 100,
  ANTIVIRUS: 101
} as const)

export type WellKnownCategory = keyof typeof CATEGORY
