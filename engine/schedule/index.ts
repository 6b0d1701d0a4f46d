/** Schedules: the records, their validation, their compilation into boundaries, the clock. */
export { DAYS, type ScheduleWindow, type ScheduledRule } from './types.js'
export { checkSchedules } from './validate.js'
export { ScheduleBoard, type ScheduleEntry } from './board.js'
export { systemClock, TEST_CLOCK_ENV, type Clock } from './clock.js'
export { formatWall, zoneOf } from './zone.js'
export { flatString } from './flat-string.js'
