import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readHostsLine } from './hosts-line.js'

test('a hosts line: the names after the address, the machine own names counted apart, comments dropped', () => {
  assert.deepEqual(readHostsLine('0.0.0.0 ads.example  Tracker.example\t# why'), {
    kind: 'names',
    names: ['ads.example', 'Tracker.example'],
    self: 0
  })
  assert.deepEqual(readHostsLine('127.0.0.1 localhost localhost4 ads.example'), {
    kind: 'names',
    names: ['ads.example'],
    self: 2
  })
  assert.deepEqual(readHostsLine('::1 ip6-localhost'), { kind: 'names', names: [], self: 1 })
  assert.deepEqual(readHostsLine('0.0.0.0 a.example#tail'), { kind: 'names', names: ['a.example'], self: 0 })
  assert.deepEqual(readHostsLine('   # a comment'), { kind: 'empty' })
  assert.deepEqual(readHostsLine(''), { kind: 'empty' })
  assert.deepEqual(readHostsLine('ads.example'), { kind: 'invalid' }, 'no address')
  assert.deepEqual(readHostsLine('0.0.0.0'), { kind: 'invalid' }, 'no name')
  assert.deepEqual(readHostsLine('blocked ads.example'), { kind: 'invalid' }, 'not an address')
})
