/**
 * The sentences the block page passes to templates as `ReasonText`, per language. They live in code
 * (not in the templates) so that an operator's own template gets the right explanation for every
 * reason with one `{{ReasonText}}`, and the shipped templates stay free of reason logic.
 */
import type { Language } from '../engine/config/index.js'

/** Why the page is shown; a superset of the policy's block reasons (docs/blockpage.md lists them). */
export type PageReason =
  | 'category'
  | 'global-blacklist'
  | 'global-allow-only'
  | 'user-blacklist'
  | 'user-allow-only'
  | 'schedule-category'
  | 'schedule-blacklist'
  | 'schedule-allow-only'
  | 'safesearch'
  | 'rpz'
  | 'unblocked'

const TEXT: Readonly<Record<Language, Readonly<Record<PageReason, string>>>> = {
  ru: {
    category: 'Сайт относится к категориям, доступ к которым ограничен.',
    'global-blacklist': 'Сайт заблокирован оператором связи для всех абонентов.',
    'global-allow-only': 'Оператор связи разрешил доступ только к сайтам из списка разрешённых.',
    'user-blacklist': 'Сайт внесён в чёрный список вашей учётной записи.',
    'user-allow-only': 'Для вашей учётной записи открыты только сайты из списка разрешённых.',
    'schedule-category': 'В это время сайты этих категорий закрыты по расписанию вашей учётной записи.',
    'schedule-blacklist': 'В это время сайт закрыт по расписанию вашей учётной записи.',
    'schedule-allow-only': 'В это время по расписанию вашей учётной записи открыты только сайты из списка разрешённых.',
    safesearch: 'Для вашей учётной записи включён безопасный поиск.',
    rpz: 'Сайт заблокирован по списку блокировки, который применяет оператор связи.',
    unblocked: 'Сайт больше не заблокирован.'
  },
  en: {
    category: 'The site belongs to categories that are restricted on this connection.',
    'global-blacklist': 'The site is blocked by your provider for all customers.',
    'global-allow-only': 'Your provider allows only the sites on its allowed list.',
    'user-blacklist': 'The site is on the block list of your account.',
    'user-allow-only': 'Your account allows only the sites on its allowed list.',
    'schedule-category': "At this time, your account's schedule restricts sites of these categories.",
    'schedule-blacklist': "At this time, your account's schedule blocks the site.",
    'schedule-allow-only': "At this time, your account's schedule allows only the sites on its allowed list.",
    safesearch: 'Safe search is on for your account.',
    rpz: 'The site is on a block list your provider enforces.',
    unblocked: 'The site is no longer blocked.'
  }
}

export function reasonText(lang: Language, reason: PageReason): string {
  return TEXT[lang][reason]
}
