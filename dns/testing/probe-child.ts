/**
 * The fuzz test's latency probe, in a process of its own (`node probe-child.js PORT`): one valid
 * query every 10 ms to the DNS server on 127.0.0.1:PORT, each answer checked. Run inside the fuzzer's
 * process, the probe measured the fuzzer's own busy event loop as much as the server; here it
 * measures the server. On the IPC message `stop` it waits for the queries in flight and sends back
 * `{ latencies, localLatencies, problems }`, then exits.
 */
import { createSocket } from 'node:dgram'
import { Checker } from './fuzz-check.js'

const port = Number(process.argv[2])
if (!Number.isInteger(port) || port <= 0 || process.send === undefined) {
  process.stderr.write('usage: node probe-child.js PORT (forked, with an IPC channel)\n')
  process.exit(2)
}
const send = process.send.bind(process)
const ticker = new Checker()
const sock = createSocket('udp4')
sock.on('message', (m) => {
  ticker.onMessage(m)
})
sock.connect(port, '127.0.0.1', () => {
  const probes: Array<Promise<string | null>> = []
  const tick = setInterval(() => {
    const v = ticker.make('p')
    sock.send(v.msg)
    probes.push(v.done)
  }, 10)
  process.on('message', (m) => {
    if (m !== 'stop') return
    clearInterval(tick)
    void Promise.all(probes).then((results) => {
      const problems = results.filter((p): p is string => p !== null)
      send({ latencies: ticker.latencies, localLatencies: ticker.localLatencies, problems }, () => {
        sock.close()
        process.exit(0)
      })
    })
  })
  send('ready')
})
