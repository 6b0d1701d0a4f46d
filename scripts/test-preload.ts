/**
 * Loaded into every test file's process by `npm test` (scripts/run-tests.ts passes it to `node --test`
 * with `--import`): makes the process's standard output blocking. That output is the pipe carrying
 * the file's test results to the runner, and with `--test-force-exit` the process exits as soon as
 * its tests are done: results still queued on a non-blocking pipe were lost, and the runner reported
 * fewer tests than ran, with exit code 0 (nodejs/node#64833, open in Node 20 to 26; seen here once on
 * Node 22, the last five results of scripts/layering.test.ts missing). Writes are small and few.
 */
const stdout = process.stdout as unknown as { _handle?: { setBlocking?: (blocking: boolean) => unknown } }
stdout._handle?.setBlocking?.(true)
