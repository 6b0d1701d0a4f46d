// Generated from docs/openapi.yaml by openapi-typescript (npm run gen:docs, scripts/ui-types.ts): do not edit.
// ui/src/api.ts names the schemas the console uses.
export interface paths {
    "/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** users in a stable order (by name), the first 100 by default */
        get: operations["getUsers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/active_users/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** identifiers of the users that have at least one address */
        get: operations["getActiveUsers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/search/{query}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * users by exact name or address, or by name or address prefix with a trailing "*"
         * @description An exact address finds the user owning it, directly or through a prefix holding it. "abc*" matches user names starting with abc, "10.1.*" addresses (canonical text) starting with 10.1.; both kinds are searched and merged. At most 1000 users, by name.
         */
        get: operations["getSearchQuery"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** one user */
        get: operations["getUsersUserId"];
        /**
         * create or update a user
         * @description Fields given replace the stored ones; fields left out keep their value (a new user starts from /userconfig/). Addresses held by another user are moved here and listed in `moved`; a client ID held by another user is refused (409).
         */
        put: operations["putUsersUserId"];
        post?: never;
        /** delete a user, its lists and its addresses (they fall back to the server defaults) */
        delete: operations["deleteUsersUserId"];
        options?: never;
        /** whether the user exists */
        head: operations["headUsersUserId"];
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/status/disabled": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * stop filtering for the user
         * @description Every other setting is kept. The user must exist (a switch does not create one).
         */
        post: operations["postUsersUserIdStatusDisabled"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/status/enabled": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * resume filtering for the user
         * @description Every other setting is kept. The user must exist (a switch does not create one).
         */
        post: operations["postUsersUserIdStatusEnabled"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/safesearch/on": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * turn safe search on
         * @description Every other setting is kept. The user must exist (a switch does not create one).
         */
        post: operations["postUsersUserIdSafesearchOn"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/safesearch/off": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * turn safe search off
         * @description Every other setting is kept. The user must exist (a switch does not create one).
         */
        post: operations["postUsersUserIdSafesearchOff"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/config/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the server defaults (anonymous addresses) */
        get: operations["getConfig"];
        /** set the given server defaults; the others keep their value */
        put: operations["putConfig"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/userconfig/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the defaults a new user starts from */
        get: operations["getUserconfig"];
        /** set the given user defaults (existing users are not changed) */
        put: operations["putUserconfig"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/ip/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the user's addresses and prefixes */
        get: operations["getUsersUserIdIp"];
        /**
         * replace the addresses (creates the user when it does not exist)
         * @description Addresses no longer listed fall back to the server defaults; an empty array disconnects the user.
         */
        put: operations["putUsersUserIdIp"];
        /** add addresses (creates the user when it does not exist) */
        post: operations["postUsersUserIdIp"];
        /** remove every address: the user is disconnected from the service (settings are kept) */
        delete: operations["deleteUsersUserIdIp"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/ip/{ip}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** remove one address */
        delete: operations["deleteUsersUserIdIpIp"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/client-ids/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the user's client IDs (DoH path, DoT server name) */
        get: operations["getUsersUserIdClientIds"];
        /** replace the client IDs (creates the user when it does not exist) */
        put: operations["putUsersUserIdClientIds"];
        /**
         * add client IDs (creates the user when it does not exist); without a body, one new random ID
         * @description With a body, the IDs it lists are added. Without one (Content-Type: application/json, nothing sent), the server makes one new random ID (20 characters of a-z and 2-7: 100 random bits) and adds it: the answer lists the user's IDs with the new one last. An ID carries no secret with it: a random one is what cannot be guessed.
         */
        post: operations["postUsersUserIdClientIds"];
        /** remove every client ID of the user (its settings are kept) */
        delete: operations["deleteUsersUserIdClientIds"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/client-ids/{client_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** remove one client ID */
        delete: operations["deleteUsersUserIdClientIdsClientId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/categorygroups/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** category groups with their categories, in the configured language or the one asked */
        get: operations["getCategorygroups"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/categories/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** every category number with its name, in the configured language or the one asked */
        get: operations["getCategories"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/site/{host}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the site record of a host: the database key that matched (the host or a parent) and its categories */
        get: operations["getSiteHost"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/filter/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the user's blocked categories */
        get: operations["getUsersUserIdFilter"];
        /** replace the blocked categories (creates the user when it does not exist) */
        put: operations["putUsersUserIdFilter"];
        /** block more categories (creates the user when it does not exist) */
        post: operations["postUsersUserIdFilter"];
        /** unblock every category */
        delete: operations["deleteUsersUserIdFilter"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/filter/{category}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** unblock one category */
        delete: operations["deleteUsersUserIdFilterCategory"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/blacklist/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the user blacklist */
        get: operations["getUsersUserIdBlacklist"];
        /**
         * replace the user blacklist (creates the user when it does not exist)
         * @description The single entry "-" makes everything forbidden except what the whitelists pass.
         */
        put: operations["putUsersUserIdBlacklist"];
        /**
         * add entries to the user blacklist (creates the user when it does not exist)
         * @description Entries already present are kept once. The single entry "-" makes everything forbidden except what the whitelists pass.
         */
        post: operations["postUsersUserIdBlacklist"];
        /** empty the user blacklist */
        delete: operations["deleteUsersUserIdBlacklist"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/blacklist/{domain}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** remove one entry from the user blacklist ("-" ends allow-only mode) */
        delete: operations["deleteUsersUserIdBlacklistDomain"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/whitelist/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the user whitelist */
        get: operations["getUsersUserIdWhitelist"];
        /**
         * replace the user whitelist (creates the user when it does not exist)
         * @description "-" is refused (422): it belongs in a blacklist.
         */
        put: operations["putUsersUserIdWhitelist"];
        /**
         * add entries to the user whitelist (creates the user when it does not exist)
         * @description Entries already present are kept once. "-" is refused (422): it belongs in a blacklist.
         */
        post: operations["postUsersUserIdWhitelist"];
        /** empty the user whitelist */
        delete: operations["deleteUsersUserIdWhitelist"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/whitelist/{domain}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** remove one entry from the user whitelist */
        delete: operations["deleteUsersUserIdWhitelistDomain"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/blacklist/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the global blacklist */
        get: operations["getBlacklist"];
        /**
         * replace the global blacklist
         * @description The single entry "-" makes everything forbidden except what the whitelists pass.
         */
        put: operations["putBlacklist"];
        /**
         * add entries to the global blacklist
         * @description Entries already present are kept once. The single entry "-" makes everything forbidden except what the whitelists pass.
         */
        post: operations["postBlacklist"];
        /** empty the global blacklist */
        delete: operations["deleteBlacklist"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/blacklist/{domain}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** remove one entry from the global blacklist ("-" ends allow-only mode) */
        delete: operations["deleteBlacklistDomain"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/whitelist/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the global whitelist */
        get: operations["getWhitelist"];
        /**
         * replace the global whitelist
         * @description "-" is refused (422): it belongs in a blacklist.
         */
        put: operations["putWhitelist"];
        /**
         * add entries to the global whitelist
         * @description Entries already present are kept once. "-" is refused (422): it belongs in a blacklist.
         */
        post: operations["postWhitelist"];
        /** empty the global whitelist */
        delete: operations["deleteWhitelist"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/whitelist/{domain}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** remove one entry from the global whitelist */
        delete: operations["deleteWhitelistDomain"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/subscriptions/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the list subscriptions, with the state of their last refresh */
        get: operations["getSubscriptions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/subscriptions/{source_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** one list subscription */
        get: operations["getSubscriptionsSourceId"];
        /**
         * add or replace a list subscription (refreshed within seconds by the api role)
         * @description A changed target moves the entries at the next refresh; a changed URL or format downloads the list whole. A source of the config file cannot be changed here (409).
         */
        put: operations["putSubscriptionsSourceId"];
        post?: never;
        /** remove a list subscription and its entries */
        delete: operations["deleteSubscriptionsSourceId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/subscriptions/{source_id}/refresh": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * refresh a list now, whole (without ETag or If-Modified-Since)
         * @description Answers when the refresh is done. With Redis it fetches on the host asked (the timed refreshes take turns); the result reaches every host.
         */
        post: operations["postSubscriptionsSourceIdRefresh"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/rpz/zones": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * the RPZ zones the rpz role serves, with their serials, in the order a consumer lists them
         * @description Asked of the rpz role on rpz.metrics-listen. enabled false: the role is off (rpz.enabled); error: it is on but did not answer.
         */
        get: operations["getRpzZones"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/stat/activity/hour": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * requests and blocks per hour of the user (all its addresses summed)
         * @description user_id may also be the reserved name *anonymous* (percent-encoded or not): the addresses with no user.
         */
        get: operations["getUsersUserIdStatActivityHour"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/stat/activity/day": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * requests and blocks per day of the user
         * @description user_id may also be the reserved name *anonymous* (percent-encoded or not): the addresses with no user.
         */
        get: operations["getUsersUserIdStatActivityDay"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/stat/domains/{filter}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * the user's top 100 domains of the range: requests, NXDOMAIN answers and blocks
         * @description filter: all, or www (only names that start with "www."). user_id may also be the reserved name *anonymous* (percent-encoded or not): the addresses with no user.
         */
        get: operations["getUsersUserIdStatDomainsFilter"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/stat/detail": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * per day of the range, the user's top domains with their categories
         * @description user_id may also be the reserved name *anonymous* (percent-encoded or not): the addresses with no user.
         */
        get: operations["getUsersUserIdStatDetail"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/stat/raw": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * the user's queries of the last hour, one row each
         * @description user_id may also be the reserved name *anonymous* (percent-encoded or not): the addresses with no user.
         */
        get: operations["getUsersUserIdStatRaw"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/stats/overview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * the whole server over the days from..to: requests and blocks per hour and day, top blocked names and categories, anonymous against users
         * @description Totals count every query of every address. topCategories counts each block for the categories that blocked it (none for a block by a list or the allow-only mode; both when two of the name's categories are filtered); blocks imported by a version before count for every category of the name. Imported every few seconds (stats.rotate + stats.import-interval), like the per-user reports.
         */
        get: operations["getStatsOverview"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/stats/timezone": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * the time zone of the reports and of schedule rules that name none (stats.timezone)
         * @description The console shows every time of a page in this zone, labelled with it: the charts (whose hours and days are in it), the live query log and the schedule editor (a rule without a timezone runs in it).
         */
        get: operations["getStatsTimezone"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/check/{domain}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * the verdict for a DNS query of domain from address ip, with the policy step and entry that decided
         * @description Steps in policy order: builtin-whitelist, global-whitelist, global-blacklist, global-allow-only ("-" in the global blacklist), rpz (an RPZ feed of rpz-feeds; matched is its trigger), user-disabled, user-whitelist, user-blacklist, user-allow-only, safesearch, safevideo, category; none when no step matched (forwarded). A user step decided by a scheduled rule inside one of its windows is schedule-whitelist, schedule-blacklist, schedule-allow-only or schedule-category, and `schedule` names the rule and the window; `changesAt` says when the decision may change next. When the deciding entry came from a list subscription or an RPZ feed, `source` names it: list:<subscription id> (step global-blacklist, global-whitelist or category) or rpz:<feed zone> (step rpz). The same code as the DNS server and the block page (engine/policy), on the current policy generation.
         */
        get: operations["getCheckDomain"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{user_id}/check/{domain}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * the verdict for domain under the user's settings, with the policy step and entry that decided
         * @description Steps in policy order: builtin-whitelist, global-whitelist, global-blacklist, global-allow-only ("-" in the global blacklist), rpz (an RPZ feed of rpz-feeds; matched is its trigger), user-disabled, user-whitelist, user-blacklist, user-allow-only, safesearch, safevideo, category; none when no step matched (forwarded). A user step decided by a scheduled rule inside one of its windows is schedule-whitelist, schedule-blacklist, schedule-allow-only or schedule-category, and `schedule` names the rule and the window; `changesAt` says when the decision may change next. When the deciding entry came from a list subscription or an RPZ feed, `source` names it: list:<subscription id> (step global-blacklist, global-whitelist or category) or rpz:<feed zone> (step rpz). The same code as the DNS server and the block page (engine/policy), on the current policy generation.
         */
        get: operations["getUsersUserIdCheckDomain"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/live/queries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * the DNS queries as they happen (Server-Sent Events), filtered
         * @description text/event-stream. Each query is one event whose data is JSON: time (ms), address, user (null: anonymous), host, blocked, reason (the policy step), blockedHost, cats, blockedCats, nxdomain, and source (list:<subscription id> or rpz:<feed zone>, only when a list subscription or an RPZ feed gave the deciding entry). First the last `last` matching rows, then new ones within about a second of the query. A client that reads too slowly loses rows and then gets `event: dropped` with {"rows": n}; `event: skipped` {"bytes": n} means the server skipped rows it could not read fast enough. At most 32 streams at once (503 API_TOO_MANY_STREAMS).
         */
        get: operations["getLiveQueries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.yaml": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** this OpenAPI document (docs/openapi.yaml), generated from the server's own route table and schemas */
        get: operations["getOpenapi.yaml"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description User object; fields left out keep their value (a new user starts from /userconfig/) */
        UserUpdate: {
            /** @description must equal the user_id of the path when given */
            name?: string;
            /** @enum {string} */
            safesearch?: "on" | "off";
            /** @enum {string} */
            safeyoutube?: "on" | "off";
            /** @enum {string} */
            status?: "enabled" | "disabled";
            /** @description category numbers (see GET /categories/) */
            filter?: number[];
            /** @description IPv4 or IPv6 addresses, or prefixes in CIDR form (10.1.0.0/16, 2001:db8::/48); no white space, zone index or /0 */
            ip?: string[];
            /** @description client IDs: each one DNS label of 1 to 63 letters, digits and "-", not starting or ending with "-"; stored lower case, unique across users */
            client_ids?: string[];
            /** @description domain names; IDNs are accepted and stored as punycode */
            whitelist?: string[];
            /** @description domain names; the entry "-" blocks everything the whitelist does not pass */
            blacklist?: string[];
            /** @description time-based rules: inside one of its weekly windows a rule adds its categories, list entries and allow-only mode to the always-on settings; outside them it does not apply. Windows of one rule may touch but not overlap. */
            schedules?: {
                /** @description unique in the list; /check and the statistics name the rule by it */
                name: string;
                /** @description IANA time zone (Europe/Berlin); default: stats.timezone */
                timezone?: string;
                windows: {
                    /** @description the days the window starts on */
                    days: ("mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun")[];
                    /** @description local start, HH:MM (00:00-23:59) */
                    from: string;
                    /** @description local end, HH:MM (up to 24:00); at or before `from`: the next day (across midnight) */
                    to: string;
                }[];
                /** @description categories blocked inside the windows */
                filter?: number[];
                /** @description names passed inside the windows */
                whitelist?: string[];
                /** @description names blocked inside the windows */
                blacklist?: string[];
                /** @description inside the windows, block everything the whitelists do not pass */
                allowonly?: boolean;
            }[];
        };
        ServerDefaultsUpdate: {
            /** @description category numbers (see GET /categories/) */
            filter?: number[];
            safesearch?: boolean;
            safeyoutube?: boolean;
            /** @description time-based rules: inside one of its weekly windows a rule adds its categories, list entries and allow-only mode to the always-on settings; outside them it does not apply. Windows of one rule may touch but not overlap. */
            schedules?: {
                /** @description unique in the list; /check and the statistics name the rule by it */
                name: string;
                /** @description IANA time zone (Europe/Berlin); default: stats.timezone */
                timezone?: string;
                windows: {
                    /** @description the days the window starts on */
                    days: ("mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun")[];
                    /** @description local start, HH:MM (00:00-23:59) */
                    from: string;
                    /** @description local end, HH:MM (up to 24:00); at or before `from`: the next day (across midnight) */
                    to: string;
                }[];
                /** @description categories blocked inside the windows */
                filter?: number[];
                /** @description names passed inside the windows */
                whitelist?: string[];
                /** @description names blocked inside the windows */
                blacklist?: string[];
                /** @description inside the windows, block everything the whitelists do not pass */
                allowonly?: boolean;
            }[];
            /** @description http(s) URL, or "" to clear */
            safesearchredirect?: string;
        };
        UserDefaultsUpdate: {
            /** @description category numbers (see GET /categories/) */
            filter?: number[];
            safesearch?: boolean;
            safeyoutube?: boolean;
            /** @description time-based rules: inside one of its weekly windows a rule adds its categories, list entries and allow-only mode to the always-on settings; outside them it does not apply. Windows of one rule may touch but not overlap. */
            schedules?: {
                /** @description unique in the list; /check and the statistics name the rule by it */
                name: string;
                /** @description IANA time zone (Europe/Berlin); default: stats.timezone */
                timezone?: string;
                windows: {
                    /** @description the days the window starts on */
                    days: ("mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun")[];
                    /** @description local start, HH:MM (00:00-23:59) */
                    from: string;
                    /** @description local end, HH:MM (up to 24:00); at or before `from`: the next day (across midnight) */
                    to: string;
                }[];
                /** @description categories blocked inside the windows */
                filter?: number[];
                /** @description names passed inside the windows */
                whitelist?: string[];
                /** @description names blocked inside the windows */
                blacklist?: string[];
                /** @description inside the windows, block everything the whitelists do not pass */
                allowonly?: boolean;
            }[];
        };
        /** @description IPv4 or IPv6 addresses, or prefixes in CIDR form (10.1.0.0/16, 2001:db8::/48); no white space, zone index or /0 */
        AddressList: string[];
        /** @description client IDs: each one DNS label of 1 to 63 letters, digits and "-", not starting or ending with "-"; stored lower case, unique across users */
        ClientIdList: string[];
        /** @description category numbers (see GET /categories/) */
        CategoryList: number[];
        /** @description domain names; IDNs are accepted and stored as punycode */
        DomainList: string[];
        /** @description a list subscription; the whole of it (PUT replaces) */
        SubscriptionUpdate: {
            /** @description http:// or https:// URL of the list */
            url: string;
            /**
             * @description hosts file, one domain a line, AdBlock ||name^ rules, or RPZ QNAME lines (name CNAME .)
             * @enum {unknown}
             */
            format: "hosts" | "domains" | "adblock" | "rpz";
            /**
             * @description the global blacklist, the global whitelist, or the category named by category
             * @enum {unknown}
             */
            target: "blacklist" | "whitelist" | "category";
            /** @description the category, with target category */
            category?: number;
            /** @description seconds between refreshes (default lists.interval) */
            interval?: number;
            /** @description refreshed while true (default true); its entries stay enforced either way */
            enabled?: boolean;
        };
        User: {
            name: string;
            /** @enum {string} */
            safesearch: "on" | "off";
            /** @enum {string} */
            safeyoutube: "on" | "off";
            /** @enum {string} */
            status: "enabled" | "disabled";
            filter: number[];
            ip: string[];
            /** @description client IDs (DoH path, DoT server name), lower case; left out when the user has none */
            client_ids?: string[];
            whitelist: string[];
            blacklist: string[];
            /** @description time-based rules: inside one of its weekly windows a rule adds its categories, list entries and allow-only mode to the always-on settings; outside them it does not apply. Windows of one rule may touch but not overlap. */
            schedules?: {
                /** @description unique in the list; /check and the statistics name the rule by it */
                name: string;
                /** @description IANA time zone (Europe/Berlin); default: stats.timezone */
                timezone?: string;
                windows: {
                    /** @description the days the window starts on */
                    days: ("mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun")[];
                    /** @description local start, HH:MM (00:00-23:59) */
                    from: string;
                    /** @description local end, HH:MM (up to 24:00); at or before `from`: the next day (across midnight) */
                    to: string;
                }[];
                /** @description categories blocked inside the windows */
                filter?: number[];
                /** @description names passed inside the windows */
                whitelist?: string[];
                /** @description names blocked inside the windows */
                blacklist?: string[];
                /** @description inside the windows, block everything the whitelists do not pass */
                allowonly?: boolean;
            }[];
        };
        UserWithMoves: {
            name: string;
            /** @enum {string} */
            safesearch: "on" | "off";
            /** @enum {string} */
            safeyoutube: "on" | "off";
            /** @enum {string} */
            status: "enabled" | "disabled";
            filter: number[];
            ip: string[];
            /** @description client IDs (DoH path, DoT server name), lower case; left out when the user has none */
            client_ids?: string[];
            whitelist: string[];
            blacklist: string[];
            /** @description time-based rules: inside one of its weekly windows a rule adds its categories, list entries and allow-only mode to the always-on settings; outside them it does not apply. Windows of one rule may touch but not overlap. */
            schedules?: {
                /** @description unique in the list; /check and the statistics name the rule by it */
                name: string;
                /** @description IANA time zone (Europe/Berlin); default: stats.timezone */
                timezone?: string;
                windows: {
                    /** @description the days the window starts on */
                    days: ("mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun")[];
                    /** @description local start, HH:MM (00:00-23:59) */
                    from: string;
                    /** @description local end, HH:MM (up to 24:00); at or before `from`: the next day (across midnight) */
                    to: string;
                }[];
                /** @description categories blocked inside the windows */
                filter?: number[];
                /** @description names passed inside the windows */
                whitelist?: string[];
                /** @description names blocked inside the windows */
                blacklist?: string[];
                /** @description inside the windows, block everything the whitelists do not pass */
                allowonly?: boolean;
            }[];
            /** @description addresses taken from another user by this request (the billing system is the source of truth) */
            moved: {
                address: string;
                /** @description the previous owner */
                from: string;
            }[];
        };
        Users: components["schemas"]["User"][];
        UserIds: string[];
        /** @description canonical addresses and prefixes */
        Addresses: string[];
        /** @description client IDs, lower case */
        ClientIds: string[];
        AddressesWithMoves: {
            ip: string[];
            /** @description addresses taken from another user by this request (the billing system is the source of truth) */
            moved: {
                address: string;
                /** @description the previous owner */
                from: string;
            }[];
        };
        Categories: number[];
        Domains: string[];
        ServerDefaults: {
            filter: number[];
            safesearch: boolean;
            safeyoutube: boolean;
            safesearchredirect: string;
            /** @description time-based rules: inside one of its weekly windows a rule adds its categories, list entries and allow-only mode to the always-on settings; outside them it does not apply. Windows of one rule may touch but not overlap. */
            schedules?: {
                /** @description unique in the list; /check and the statistics name the rule by it */
                name: string;
                /** @description IANA time zone (Europe/Berlin); default: stats.timezone */
                timezone?: string;
                windows: {
                    /** @description the days the window starts on */
                    days: ("mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun")[];
                    /** @description local start, HH:MM (00:00-23:59) */
                    from: string;
                    /** @description local end, HH:MM (up to 24:00); at or before `from`: the next day (across midnight) */
                    to: string;
                }[];
                /** @description categories blocked inside the windows */
                filter?: number[];
                /** @description names passed inside the windows */
                whitelist?: string[];
                /** @description names blocked inside the windows */
                blacklist?: string[];
                /** @description inside the windows, block everything the whitelists do not pass */
                allowonly?: boolean;
            }[];
        };
        UserDefaults: {
            filter: number[];
            safesearch: boolean;
            safeyoutube: boolean;
            /** @description time-based rules: inside one of its weekly windows a rule adds its categories, list entries and allow-only mode to the always-on settings; outside them it does not apply. Windows of one rule may touch but not overlap. */
            schedules?: {
                /** @description unique in the list; /check and the statistics name the rule by it */
                name: string;
                /** @description IANA time zone (Europe/Berlin); default: stats.timezone */
                timezone?: string;
                windows: {
                    /** @description the days the window starts on */
                    days: ("mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun")[];
                    /** @description local start, HH:MM (00:00-23:59) */
                    from: string;
                    /** @description local end, HH:MM (up to 24:00); at or before `from`: the next day (across midnight) */
                    to: string;
                }[];
                /** @description categories blocked inside the windows */
                filter?: number[];
                /** @description names passed inside the windows */
                whitelist?: string[];
                /** @description names blocked inside the windows */
                blacklist?: string[];
                /** @description inside the windows, block everything the whitelists do not pass */
                allowonly?: boolean;
            }[];
        };
        CategoryGroups: {
            group: string;
            categories: {
                [key: string]: string;
            };
        }[];
        /** @description category number → name */
        CategoryNames: {
            [key: string]: string;
        };
        Site: {
            /** @description the database key that matched (the host or a parent domain) */
            domain: string;
            categories: number[];
        };
        Chart: {
            /** @description hours (YYYY-MM-DD HH:00:00), days (YYYY-MM-DD) or domains */
            labels: string[];
            datasets: {
                /** @enum {unknown} */
                label: "Requests" | "NXdomain" | "Blocks";
                data: number[];
            }[];
        };
        Detail: {
            /** @description the days, YYYY-MM-DD */
            timestamps: string[];
            /** @description one per day: a chart of its top domains, and cats[i], the categories of labels[i] */
            reports: {
                labels: string[];
                cats: number[][];
                datasets: components["schemas"]["Chart"]["datasets"];
            }[];
        };
        RawReport: {
            /** @description created, nxdomain, address, host, blockedhost, reasom, cats, blockedcats, then the fields ?with= adds (source) */
            fields: string[];
            data: [
                string,
                number,
                string,
                string,
                string,
                string,
                number[],
                number[],
                string
            ][];
        };
        Overview: {
            hours: components["schemas"]["Chart"];
            days: components["schemas"]["Chart"];
            totals: components["schemas"]["Counts"];
            anonymous: components["schemas"]["Counts"];
            users: components["schemas"]["Counts"];
            topBlocked: {
                domain: string;
                blocks: number;
                requests: number;
                cats: number[];
            }[];
            topCategories: {
                category: number;
                blocks: number;
            }[];
        };
        TimeZone: {
            /** @description IANA name (UTC, Europe/Berlin) */
            timezone: string;
        };
        Counts: {
            requests: number;
            blocks: number;
        };
        /** @description what the DNS server answers this client for this name right now, and the policy step that decided */
        Check: {
            /** @description the name judged, as the category database keys it */
            domain: string;
            /** @description the client address judged (null for /users/{user_id}/check/) */
            address: string | null;
            /** @description the user the policy came from; null: anonymous (the server defaults of /config/) */
            user: string | null;
            /** @description the client ID judged (?client-id=, lower case); left out when none was given */
            clientId?: string;
            /**
             * @description forward: the operator's resolver answers; block: the block page address; safesearch/safevideo: the safe host; refuse: REFUSED, the client ID is no user's (proxy.unknown-client-id: refuse)
             * @enum {unknown}
             */
            action: "forward" | "block" | "safesearch" | "safevideo" | "refuse";
            /**
             * @description the step that decided, in policy order; none: no step matched, the query is forwarded; schedule-*: the user step of that name, decided by a scheduled rule inside one of its windows
             * @enum {unknown}
             */
            step: "builtin-whitelist" | "global-whitelist" | "global-blacklist" | "global-allow-only" | "rpz" | "user-disabled" | "user-whitelist" | "user-blacklist" | "user-allow-only" | "safesearch" | "safevideo" | "category" | "unknown-client-id" | "schedule-whitelist" | "schedule-blacklist" | "schedule-allow-only" | "schedule-category" | "none";
            /** @description the list entry ("-" for allow-only), search or video host, or category database key that decided */
            matched: string | null;
            /** @description where the deciding entry came from, left out for the operator's own lists and the category database: list:<id> (a list subscription; steps global-blacklist, global-whitelist, category) or rpz:<zone> (an RPZ feed; step rpz) */
            source?: string;
            /** @description categories of the name in the category database */
            categories: number[];
            /** @description those in the filter that blocked it (step category) */
            blockedCategories: number[];
            /** @description the site record of the name (GET /site/{host}), null when the database does not know it */
            site: {
                domain?: string;
                categories?: number[];
            } | null;
            /** @description safevideo: the safe host answered; safesearch: the search engine */
            target: string | null;
            /** @description the scheduled rule that decided (schedule-* steps), with its open window; null otherwise */
            schedule: {
                name: string;
                timezone: string;
                window: {
                    /** @description its place in the rule's windows */
                    index: number;
                    days: string[];
                    from: string;
                    to: string;
                };
            } | null;
            /** @description when a scheduled rule touching this name next opens or closes, so the decision may change (answers' TTLs end there); null when no scheduled rule touches the name */
            changesAt: {
                /** @description ISO 8601, UTC */
                utc: string;
                /** @description YYYY-MM-DD HH:MM:SS in the rule's time zone */
                local: string;
                timezone: string;
            } | null;
        };
        Error: {
            error: {
                code: string;
                message: string;
                /** @description the request part at fault: a path or query parameter, or a body element such as filter[2] */
                field?: string;
            };
        };
        Subscription: {
            id: string;
            /** @description http:// or https:// URL of the list */
            url: string;
            /**
             * @description hosts file, one domain a line, AdBlock ||name^ rules, or RPZ QNAME lines (name CNAME .)
             * @enum {unknown}
             */
            format: "hosts" | "domains" | "adblock" | "rpz";
            /**
             * @description the global blacklist, the global whitelist, or the category named by category
             * @enum {unknown}
             */
            target: "blacklist" | "whitelist" | "category";
            /** @description the category, with target category */
            category?: number;
            /** @description seconds between refreshes (default lists.interval) */
            interval?: number;
            /** @description refreshed while true (default true); its entries stay enforced either way */
            enabled: boolean;
            /**
             * @description config sources are changed in the config file only
             * @enum {unknown}
             */
            origin: "config" | "api";
            /** @description the last refresh (null before the first); times in ms since the epoch, 0 for never */
            state: {
                /** @description entries of the last good copy, enforced now */
                entries?: number;
                lastAttempt?: number;
                /** @description the copy was last confirmed (200 applied, or 304) */
                lastSuccess?: number;
                /** @description the entries last changed */
                lastChange?: number;
                nextDue?: number;
                etag?: string;
                lastModified?: string;
                bytes?: number;
                /** @description lines of the last good copy that could not be read */
                invalid?: number;
                /** @description well-formed lines that are not entries (exceptions, other actions) */
                skipped?: number;
                /** @description failed refreshes since the source was added */
                errors?: number;
                consecutiveErrors?: number;
                lastError?: string;
                /** @description the host that made the last attempt */
                host?: string;
            } | null;
        };
        Subscriptions: components["schemas"]["Subscription"][];
        RefreshOutcome: {
            /** @enum {unknown} */
            status: "changed" | "unchanged" | "failed" | "skipped";
            entries?: number;
            added?: number;
            removed?: number;
            /** @description entries whose target changed */
            moved?: number;
            /** @description why it failed (the last good copy stays) */
            error?: string;
            /** @description why it was skipped (another host holds the refresh) */
            why?: string;
        };
        RpzZones: {
            /** @description rpz.enabled */
            enabled: boolean;
            /** @description rpz.listen, where consumers transfer the zones from */
            listen: string;
            zones: {
                name: string;
                /** @description the SOA serial: the policy generation */
                serial: number;
                /** @description owner names in the zone */
                triggers: number;
                /** @enum {unknown} */
                kind: "global" | "user" | "category";
            }[];
            /** @description why the list is empty while the role is enabled */
            error?: string;
        };
    };
    responses: {
        /** @description no credentials (and not let in by api.loopback-without-credentials or api.require-credentials: false), or wrong ones; WWW-Authenticate names both schemes */
        Unauthorized: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description too many failed authentications from this address in a minute; Retry-After says when to try again */
        AuthThrottled: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getUsers: {
        parameters: {
            query?: {
                /** @description index of the first user (default 0) */
                start?: number;
                /** @description index after the last user (default start + 100; at most start + 10000) */
                stop?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description User objects */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Users"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getActiveUsers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description user identifiers, by name */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserIds"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSearchQuery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user name or IP address; a trailing "*" matches a name prefix or an address prefix */
                query: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description matching User objects (possibly none) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Users"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersUserId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the User object */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putUsersUserId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UserUpdate"];
            };
        };
        responses: {
            /** @description the user as stored, with the addresses moved from other users */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserWithMoves"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description a client ID in the body belongs to another user (API_CLIENT_ID_TAKEN, naming the element) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteUsersUserId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    headUsersUserId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the user exists; the headers (Content-Length too) are those of the GET */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postUsersUserIdStatusDisabled: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the user as stored */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postUsersUserIdStatusEnabled: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the user as stored */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postUsersUserIdSafesearchOn: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the user as stored */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postUsersUserIdSafesearchOff: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the user as stored */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getConfig: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description server defaults */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ServerDefaults"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putConfig: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ServerDefaultsUpdate"];
            };
        };
        responses: {
            /** @description server defaults as stored */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ServerDefaults"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUserconfig: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description user defaults */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserDefaults"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putUserconfig: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UserDefaultsUpdate"];
            };
        };
        responses: {
            /** @description user defaults as stored */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserDefaults"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersUserIdIp: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description canonical addresses */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Addresses"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putUsersUserIdIp: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AddressList"];
            };
        };
        responses: {
            /** @description the user's addresses and the moves */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AddressesWithMoves"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postUsersUserIdIp: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AddressList"];
            };
        };
        responses: {
            /** @description the user's addresses and the moves */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AddressesWithMoves"];
                };
            };
            /** @description the user was created; its addresses and the moves */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AddressesWithMoves"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteUsersUserIdIp: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteUsersUserIdIpIp: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
                /** @description an address, or a prefix with its "/" percent-encoded (10.0.0.0%2F24) */
                ip: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersUserIdClientIds: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the user's client IDs */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClientIds"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putUsersUserIdClientIds: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ClientIdList"];
            };
        };
        responses: {
            /** @description the user's client IDs */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClientIds"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description a client ID in the body belongs to another user (API_CLIENT_ID_TAKEN, naming the element) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postUsersUserIdClientIds: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ClientIdList"];
            };
        };
        responses: {
            /** @description the user's client IDs */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClientIds"];
                };
            };
            /** @description the user was created; its client IDs */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClientIds"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description a client ID in the body belongs to another user (API_CLIENT_ID_TAKEN, naming the element) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteUsersUserIdClientIds: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteUsersUserIdClientIdsClientId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
                /** @description a client ID (one DNS label; matched without regard to case) */
                client_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getCategorygroups: {
        parameters: {
            query?: {
                /** @description ru or en: the names in this language (default: datafiles.language); a language whose file is missing falls back to the configured one. Content-Language says which was served. */
                lang?: "ru" | "en";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Category group records */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CategoryGroups"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getCategories: {
        parameters: {
            query?: {
                /** @description ru or en: the names in this language (default: datafiles.language); a language whose file is missing falls back to the configured one. Content-Language says which was served. */
                lang?: "ru" | "en";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description number → name */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CategoryNames"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSiteHost: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description host name to look up */
                host: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Site record */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Site"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersUserIdFilter: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description category numbers, ascending */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Categories"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putUsersUserIdFilter: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CategoryList"];
            };
        };
        responses: {
            /** @description the blocked categories */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Categories"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postUsersUserIdFilter: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CategoryList"];
            };
        };
        responses: {
            /** @description the blocked categories */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Categories"];
                };
            };
            /** @description the user was created; its blocked categories */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Categories"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteUsersUserIdFilter: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description cleared */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteUsersUserIdFilterCategory: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
                /** @description category number */
                category: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersUserIdBlacklist: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description entries in the order they were added */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putUsersUserIdBlacklist: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DomainList"];
            };
        };
        responses: {
            /** @description the list */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postUsersUserIdBlacklist: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DomainList"];
            };
        };
        responses: {
            /** @description the list */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            /** @description the user was created; the list */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteUsersUserIdBlacklist: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description emptied */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteUsersUserIdBlacklistDomain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
                /** @description domain name (IDN or punycode); "-" for the allow-only entry of a blacklist */
                domain: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersUserIdWhitelist: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description entries in the order they were added */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putUsersUserIdWhitelist: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DomainList"];
            };
        };
        responses: {
            /** @description the list */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postUsersUserIdWhitelist: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DomainList"];
            };
        };
        responses: {
            /** @description the list */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            /** @description the user was created; the list */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteUsersUserIdWhitelist: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description emptied */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteUsersUserIdWhitelistDomain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
                /** @description domain name (IDN or punycode); "-" for the allow-only entry of a blacklist */
                domain: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getBlacklist: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description entries in the order they were added */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putBlacklist: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DomainList"];
            };
        };
        responses: {
            /** @description the list */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postBlacklist: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DomainList"];
            };
        };
        responses: {
            /** @description the list */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteBlacklist: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description emptied */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteBlacklistDomain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description domain name (IDN or punycode); "-" for the allow-only entry of a blacklist */
                domain: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWhitelist: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description entries in the order they were added */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putWhitelist: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DomainList"];
            };
        };
        responses: {
            /** @description the list */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postWhitelist: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DomainList"];
            };
        };
        responses: {
            /** @description the list */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domains"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteWhitelist: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description emptied */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteWhitelistDomain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description domain name (IDN or punycode); "-" for the allow-only entry of a blacklist */
                domain: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSubscriptions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description config sources first, then those added through the API */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Subscriptions"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSubscriptionsSourceId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description list subscription id */
                source_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the subscription */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Subscription"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putSubscriptionsSourceId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description list subscription id */
                source_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SubscriptionUpdate"];
            };
        };
        responses: {
            /** @description replaced */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Subscription"];
                };
            };
            /** @description added */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Subscription"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description a client ID in the body belongs to another user (API_CLIENT_ID_TAKEN, naming the element) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body larger than api.body-limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteSubscriptionsSourceId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description list subscription id */
                source_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a client ID in the body belongs to another user (API_CLIENT_ID_TAKEN, naming the element) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postSubscriptionsSourceIdRefresh: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description list subscription id */
                source_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description what the refresh did */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RefreshOutcome"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getRpzZones: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the zones */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RpzZones"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersUserIdStatActivityHour: {
        parameters: {
            query?: {
                /** @description first day, YYYY-MM-DD in stats.timezone (required; at most stats.retention-months back, three by default) */
                from?: string;
                /** @description last day, YYYY-MM-DD (required; not after today, not before from) */
                to?: string;
            };
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description one label per hour of the range */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Chart"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersUserIdStatActivityDay: {
        parameters: {
            query?: {
                /** @description first day, YYYY-MM-DD in stats.timezone (required; at most stats.retention-months back, three by default) */
                from?: string;
                /** @description last day, YYYY-MM-DD (required; not after today, not before from) */
                to?: string;
            };
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description one label per day of the range */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Chart"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersUserIdStatDomainsFilter: {
        parameters: {
            query?: {
                /** @description first day, YYYY-MM-DD in stats.timezone (required; at most stats.retention-months back, three by default) */
                from?: string;
                /** @description last day, YYYY-MM-DD (required; not after today, not before from) */
                to?: string;
            };
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
                /** @description all, or www (names that start with "www.") */
                filter: "all" | "www";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description one label per domain, most requested first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Chart"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersUserIdStatDetail: {
        parameters: {
            query?: {
                /** @description first day, YYYY-MM-DD in stats.timezone (required; at most stats.retention-months back, three by default) */
                from?: string;
                /** @description last day, YYYY-MM-DD (required; not after today, not before from) */
                to?: string;
            };
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description timestamps (days) and one report per day */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Detail"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersUserIdStatRaw: {
        parameters: {
            query?: {
                /** @description fields to add after the specification's eight, comma-separated: source (the reason's detail, list:<id> for a list subscription, rpz:<zone> for an RPZ feed, '' otherwise). Without it the answer has the eight fields only */
                with?: string;
            };
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description field names and rows */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RawReport"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getStatsOverview: {
        parameters: {
            query?: {
                /** @description first day, YYYY-MM-DD in stats.timezone (required; at most stats.retention-months back, three by default) */
                from?: string;
                /** @description last day, YYYY-MM-DD (required; not after today, not before from) */
                to?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the overview */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Overview"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getStatsTimezone: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the zone, an IANA name */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TimeZone"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getCheckDomain: {
        parameters: {
            query?: {
                /** @description the client address (required without client-id): its user by exact address or longest prefix, else the server defaults */
                ip?: string;
                /** @description a client ID (DoH path, DoT server name): its user decides, whatever ip says; an ID no user holds is refused (action refuse, step unknown-client-id) or anonymous, as proxy.unknown-client-id says */
                "client-id"?: string;
            };
            header?: never;
            path: {
                /** @description domain name (IDN or punycode); "-" for the allow-only entry of a blacklist */
                domain: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the verdict explained */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Check"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsersUserIdCheckDomain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description user identifier */
                user_id: string;
                /** @description domain name (IDN or punycode); "-" for the allow-only entry of a blacklist */
                domain: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the verdict explained */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Check"];
                };
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description unknown user, entry or resource */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getLiveQueries: {
        parameters: {
            query?: {
                /** @description only this user's queries (*anonymous*: addresses with no user) */
                user?: string;
                /** @description only this client address, or an address prefix ending in * */
                address?: string;
                /** @description 1: only blocked queries */
                blocked?: "0" | "1";
                /** @description only names containing this text */
                domain?: string;
                /** @description recent rows sent first (0 to 1000, default 100) */
                last?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description an event stream (text/event-stream) that stays open */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description malformed request: bad JSON, bad user_id, bad path or query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description too many live log streams open */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    "getOpenapi.yaml": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OpenAPI 3.1 in YAML (application/yaml) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["AuthThrottled"];
            /** @description internal fault (logged once); the body says nothing more */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
