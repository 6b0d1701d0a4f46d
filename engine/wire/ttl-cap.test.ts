import assert from 'node:assert/strict'
import { test } from 'node:test'
import dnsPacket from 'dns-packet'
import { capTtls } from './ttl-cap.js'

test('capTtls lowers every record TTL above the cap, keeps lower ones and the OPT record', () => {
  const msg = dnsPacket.encode({
    type: 'response',
    id: 7,
    questions: [{ type: 'A', name: 'www.example.com' }],
    answers: [
      { type: 'CNAME', name: 'www.example.com', ttl: 3600, data: 'example.com' },
      { type: 'A', name: 'example.com', ttl: 30, data: '192.0.2.1' }
    ],
    authorities: [{ type: 'NS', name: 'example.com', ttl: 86400, data: 'ns.example.com' }],
    additionals: [
      {
        type: 'OPT',
        name: '.',
        udpPayloadSize: 1232,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: 0x8000,
        flag_do: true,
        options: []
      }
    ]
  })
  assert.equal(capTtls(msg, msg.length, 60), 2)
  const back = dnsPacket.decode(msg)
  assert.deepEqual(
    back.answers?.map((a) => ('ttl' in a ? a.ttl : -1)),
    [60, 30]
  )
  assert.equal(back.authorities?.[0] && 'ttl' in back.authorities[0] ? back.authorities[0].ttl : -1, 60)
  const opt = back.additionals?.[0] as { flags?: number } | undefined
  assert.equal(opt?.flags, 0x8000, 'the OPT record is untouched (its TTL field holds the DO flag)')
})

test('capTtls stops at a truncated message without throwing', () => {
  const msg = dnsPacket.encode({
    type: 'response',
    questions: [{ type: 'A', name: 'a.example' }],
    answers: [{ type: 'A', name: 'a.example', ttl: 300, data: '192.0.2.1' }]
  })
  assert.equal(capTtls(msg, msg.length - 8, 5), 0)
  assert.equal(capTtls(msg.subarray(0, 5), 5, 5), 0)
})
