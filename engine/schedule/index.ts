/** Schedules (issue 27): the records, their validation, their compilation into boundaries, the clock. */
export { DAYS, type Day, type ScheduleWindow, type ScheduledRule } from './types.js'
export { checkSchedules, type ScheduleProblem } from './validate.js'
export { CompiledSchedule, parseClock, type ScheduleAt } from './compile.js'
export { ScheduleBoard, ScheduleEntry } from './board.js'
export { systemClock, parseInstant, TEST_CLOCK_ENV, type Clock } from './clock.js'
export { isTimeZone, formatWall, zoneOf } from './zone.js'
