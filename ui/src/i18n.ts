/** The console's two languages. The choice is kept in localStorage; the first visit follows the browser. */
const en = {
  console: 'console',
  overview: 'Overview', users: 'Users', live: 'Live log', settings: 'Global lists and defaults',
  from: 'From', to: 'To', show: 'Show', requests: 'Requests', blocks: 'Blocks', nxdomain: 'NXDOMAIN',
  perHour: 'Queries per hour', perDay: 'Queries per day', topBlocked: 'Most blocked domains', topCategories: 'Blocked by category',
  anonVsKnown: 'Anonymous addresses and users', anonymous: 'Anonymous', knownUsers: 'Users', total: 'All queries',
  domain: 'Domain', categories: 'Categories', noData: 'No data for these days yet (statistics are imported every 5 minutes).',
  search: 'Search', searchHint: 'name or address; * at the end matches a prefix (alice*, 10.0.*)', prev: 'Previous', next: 'Next',
  name: 'Name', status: 'Status', addresses: 'Addresses', filter: 'Blocked categories', newUser: 'New user', create: 'Create',
  userId: 'User id', addressesHint: 'one per line: 10.0.0.5, 10.1.0.0/16, 2001:db8::1',
  enabled: 'enabled', disabled: 'disabled', on: 'on', off: 'off', filtering: 'Filtering', safesearch: 'Safe search', safevideo: 'Safe video',
  whitelist: 'Whitelist', blacklist: 'Blacklist', listHint: 'one domain per line; subdomains included',
  allowOnly: 'Allow only the whitelist', allowOnlyOn: 'Allow-only mode: everything is blocked except the whitelist.',
  save: 'Save', saved: 'Saved', settingsOf: 'Settings', reports: 'Reports', liveFor: 'Live log',
  check: 'Check a domain', checkHint: 'e.g. casino.example', checkBtn: 'Check', address: 'Address',
  verdict: 'Verdict', step: 'Decided by', matched: 'Matched', user: 'User',
  topDomains: 'Top domains', detail: 'Per day', raw: 'Last hour', time: 'Time', reason: 'Reason',
  blockedOnly: 'Blocked only', domainContains: 'Domain contains', pause: 'Pause', resume: 'Resume', clear: 'Clear',
  dropped: (n: number) => `${n} rows were lost: this page did not keep up.`,
  skipped: 'The server skipped rows it could not read fast enough.',
  connected: 'Connected', connecting: 'Connecting…',
  serverDefaults: 'Server defaults (/config/): anonymous addresses', userDefaults: 'New-user defaults (/userconfig/)',
  redirect: 'Safe-search redirect URL', globalWhite: 'Global whitelist', globalBlack: 'Global blacklist',
  globalNote: 'Global lists apply to every user and take priority over the users\' own lists.',
  notFound: 'Not found', back: 'Back to users', delete: 'Delete',
  action: { forward: 'Open', block: 'Blocked', safesearch: 'Safe search', safevideo: 'Safe video' } as Record<string, string>,
  steps: {
    'builtin-whitelist': 'the built-in whitelist',
    'global-whitelist': 'the global whitelist',
    'global-blacklist': 'the global blacklist',
    'global-allow-only': 'global allow-only mode ("-" in the global blacklist)',
    'user-disabled': 'filtering is disabled for this user',
    'user-whitelist': 'the user\'s whitelist',
    'user-blacklist': 'the user\'s blacklist',
    'user-allow-only': 'the user\'s allow-only mode ("-" in the blacklist)',
    safesearch: 'safe search',
    safevideo: 'safe video',
    category: 'a blocked category',
    none: 'no rule: the query is forwarded'
  } as Record<string, string>,
  anon: 'anonymous'
}

const ru: typeof en = {
  console: 'консоль',
  overview: 'Обзор', users: 'Пользователи', live: 'Журнал запросов', settings: 'Общие списки и настройки',
  from: 'С', to: 'По', show: 'Показать', requests: 'Запросы', blocks: 'Блокировки', nxdomain: 'NXDOMAIN',
  perHour: 'Запросы по часам', perDay: 'Запросы по дням', topBlocked: 'Чаще всего блокируемые домены', topCategories: 'Блокировки по категориям',
  anonVsKnown: 'Анонимные адреса и пользователи', anonymous: 'Анонимные', knownUsers: 'Пользователи', total: 'Все запросы',
  domain: 'Домен', categories: 'Категории', noData: 'За эти дни данных пока нет (статистика загружается каждые 5 минут).',
  search: 'Найти', searchHint: 'имя или адрес; * в конце — по началу (alice*, 10.0.*)', prev: 'Назад', next: 'Вперёд',
  name: 'Имя', status: 'Состояние', addresses: 'Адреса', filter: 'Блокируемые категории', newUser: 'Новый пользователь', create: 'Создать',
  userId: 'Идентификатор', addressesHint: 'по одному в строке: 10.0.0.5, 10.1.0.0/16, 2001:db8::1',
  enabled: 'включена', disabled: 'отключена', on: 'вкл.', off: 'выкл.', filtering: 'Фильтрация', safesearch: 'Безопасный поиск', safevideo: 'Безопасное видео',
  whitelist: 'Белый список', blacklist: 'Чёрный список', listHint: 'по одному домену в строке; поддомены тоже',
  allowOnly: 'Разрешить только белый список', allowOnlyOn: 'Режим «только белый список»: запрещено всё, кроме белого списка.',
  save: 'Сохранить', saved: 'Сохранено', settingsOf: 'Настройки', reports: 'Отчёты', liveFor: 'Журнал запросов',
  check: 'Проверить домен', checkHint: 'например, casino.example', checkBtn: 'Проверить', address: 'Адрес',
  verdict: 'Ответ', step: 'Решило', matched: 'Совпадение', user: 'Пользователь',
  topDomains: 'Популярные домены', detail: 'По дням', raw: 'Последний час', time: 'Время', reason: 'Причина',
  blockedOnly: 'Только блокировки', domainContains: 'Домен содержит', pause: 'Пауза', resume: 'Продолжить', clear: 'Очистить',
  dropped: (n: number) => `Потеряно строк: ${n} — страница не успевала их принимать.`,
  skipped: 'Сервер пропустил строки, которые не успел прочитать.',
  connected: 'Подключено', connecting: 'Подключение…',
  serverDefaults: 'Настройки сервера (/config/): анонимные адреса', userDefaults: 'Настройки новых пользователей (/userconfig/)',
  redirect: 'Адрес перенаправления безопасного поиска', globalWhite: 'Общий белый список', globalBlack: 'Общий чёрный список',
  globalNote: 'Общие списки действуют для всех пользователей и важнее их собственных списков.',
  notFound: 'Не найдено', back: 'К пользователям', delete: 'Удалить',
  action: { forward: 'Открыт', block: 'Заблокирован', safesearch: 'Безопасный поиск', safevideo: 'Безопасное видео' },
  steps: {
    'builtin-whitelist': 'встроенный белый список',
    'global-whitelist': 'общий белый список',
    'global-blacklist': 'общий чёрный список',
    'global-allow-only': 'общий режим «только белый список» («-» в общем чёрном списке)',
    'user-disabled': 'фильтрация пользователя отключена',
    'user-whitelist': 'белый список пользователя',
    'user-blacklist': 'чёрный список пользователя',
    'user-allow-only': 'режим «только белый список» пользователя («-» в чёрном списке)',
    safesearch: 'безопасный поиск',
    safevideo: 'безопасное видео',
    category: 'блокируемая категория',
    none: 'ни одно правило: запрос передаётся дальше'
  },
  anon: 'аноним'
}

export type Lang = 'en' | 'ru'
const KEY = 'filterd.lang'

function initial (): Lang {
  const saved = localStorage.getItem(KEY)
  if (saved === 'en' || saved === 'ru') return saved
  return navigator.language.toLowerCase().startsWith('ru') ? 'ru' : 'en'
}

export let lang: Lang = initial()
export let t: typeof en = lang === 'ru' ? ru : en

export function setLang (l: Lang): void {
  lang = l
  t = l === 'ru' ? ru : en
  localStorage.setItem(KEY, l)
  document.documentElement.lang = l
}

export function fmt (n: number): string {
  return n.toLocaleString(lang === 'ru' ? 'ru-RU' : 'en-US')
}
