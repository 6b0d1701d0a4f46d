// The IPv4 client address texts the native UDP front hands the policy: right for every address however
// many share a slot.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Ipv4Names } from './ipv4-names.js'

const dotted = (ip4: number): string => [ip4 >>> 24, (ip4 >>> 16) & 255, (ip4 >>> 8) & 255, ip4 & 255].join('.')

test('every address gets its own text, across more addresses than slots', () => {
  const names = new Ipv4Names()
  // 300,000 addresses from 127.16.0.0 on, twice: far more than the table's slots, so slots are shared.
  for (let pass = 0; pass < 2; pass++)
    for (let i = 0; i < 300_000; i++) {
      const ip4 = (0x7f100000 + i) >>> 0
      assert.equal(names.nameOf(ip4), dotted(ip4))
    }
  for (const ip4 of [0, 0xffffffff, 0x80000000, 0x0a000001]) assert.equal(names.nameOf(ip4), dotted(ip4))
})
