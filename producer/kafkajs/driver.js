#!/usr/bin/env node
// driver.js is kconform's KafkaJS driver: KafkaJS's idempotent producer
// (idempotent: true, maxInFlightRequests: 1, the settings KafkaJS's
// Transactions guide gives for exactly-once) behind kconform's driver contract (docs/clients.md): settings from
// flags or KCONFORM_* environment variables, one JSON event per line on
// stdout, the client's own logs on stderr, and a clean stop on SIGTERM.
//
// Each partition has at most one producer.send() under way, holding every
// record queued for it since the last one (a linger of one round trip, as
// contract.js's partitionQueues sends): a send's outcome is then exactly
// its records' outcome. KafkaJS rejects a send that spans brokers as a
// whole even when some brokers wrote their part, so a send across
// partitions could not report records one by one.
//
//   driver.js --brokers a,b --topic t --partitions n --run-id id
//             [--count n] [--rate r] [--set key=value]...
//
// A --set key is a KafkaJS option in KafkaJS's own spelling: producer
// options (metadataMaxAge, maxInFlightRequests, idempotent,
// allowAutoTopicCreation), send options (send.timeout, send.acks) or else
// client options, nested with dots (retry.maxRetryTime, requestTimeout).
// One key is the driver's own: driver.sendBatch=true sends as many
// applications do, every queued record of every partition in one
// producer.sendBatch() across brokers (one under way at a time), the path
// of KafkaJS #1303 and PR #1798; a partition the answer leaves out is
// reported acknowledged at offset -1, as KafkaJS resolves it.
//
// Given --transactional-id (with --transaction-size and --abort-every) it
// runs transactions as contract.js's runTransactions has it, with
// KafkaJS's transactionalId: producer.transaction() begins each, whose
// send() (sendBatch() with driver.sendBatch) carries its records, one per
// partition under way as above, and whose commit() or abort() ends it.
'use strict'
const { Kafka, logLevel } = require('kafkajs')

const { parseArgs, settingValue, put, emit, runTransactions, partitionQueues } = require('../js/contract.js')

const PRODUCER_OPTIONS = new Set(['metadataMaxAge', 'maxInFlightRequests', 'idempotent', 'allowAutoTopicCreation', 'transactionTimeout'])

function configs(a) {
  // kconform:driver-settings begin (each listed with the library's reason in driver/own.go and docs/clients.md)
  const client = { clientId: 'kconform', brokers: a.brokers.split(','), logLevel: logLevel.INFO }
  const producer = { idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false }
  if (a.transactionalId) producer.transactionalId = a.transactionalId
  const send = { acks: -1 }
  // kconform:driver-settings end
  const driver = { sendBatch: false }
  for (const kv of a.set) {
    const i = kv.indexOf('=')
    if (i <= 0) throw new Error(`--set ${kv}: want key=value`)
    const key = kv.slice(0, i); const value = settingValue(kv.slice(i + 1))
    if (key === 'driver.sendBatch') driver.sendBatch = value === true || value === 'true'
    else if (key.startsWith('driver.')) throw new Error(`--set ${kv}: the driver's only own setting is driver.sendBatch`)
    else if (key.startsWith('send.')) put(send, key.slice(5), value)
    else if (key === 'logLevel') client.logLevel = logLevel[String(value).toUpperCase()]
    else if (PRODUCER_OPTIONS.has(key.split('.')[0])) put(producer, key, value)
    else put(client, key, value)
  }
  return { client, producer, send, driver }
}

// logCreator sends KafkaJS's own log to stderr as one line per entry.
const logCreator = () => ({ namespace, level, label, log }) => {
  const { message, timestamp, logger, ...extra } = log
  process.stderr.write(`${timestamp} ${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
}

// FENCED are the errors after which a transactional producer can do
// nothing: another producer has its transactional id, or its epoch is
// gone. KafkaJS 2.2.4 has no name for PRODUCER_FENCED: it reports error
// code 90 as KAFKAJS_UNKNOWN_ERROR_CODE, "Unknown error code 90".
const FENCED = new Set(['INVALID_PRODUCER_EPOCH', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED'])

// fenced tells whether err leaves a transactional producer nothing to do
// but stop.
function fenced(err) {
  return FENCED.has(errorName(err)) || /\bUnknown error code 90\b/.test(errorMessage(err))
}

// errorName is a KafkaJS error's protocol error type (INVALID_PRODUCER_EPOCH),
// found in its causes (KafkaJSNumberOfRetriesExceeded wraps the last
// try's), else its class.
function errorName(err) {
  for (let e = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (e.type) return e.type
  }
  return (err && err.name) || 'Error'
}

// errorMessage is an error's message with those of its causes.
function errorMessage(err) {
  const parts = []
  for (let e = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (e.message && !parts.includes(e.message)) parts.push(e.message)
  }
  return parts.join(': ') || String(err)
}

async function main() {
  const a = parseArgs(process.argv.slice(2))
  const cfg = configs(a)
  const kafka = new Kafka({ ...cfg.client, logCreator })
  const producer = kafka.producer(cfg.producer)
  const q = partitionQueues(a, {
    // sendBatch mode: one sendBatch() under way for every partition.
    send: (sender, carried) => cfg.driver.sendBatch
      ? sender.sendBatch({
        ...cfg.send,
        topicMessages: [{ topic: a.topic, messages: carried.flatMap(([p, recs]) => recs.map(r => ({ value: r.value, partition: p }))) }],
      })
      : sender.send({ ...cfg.send, topic: a.topic, messages: carried[0][1].map(r => ({ value: r.value, partition: carried[0][0] })) }),
    result: (p, err, res) => {
      if (err) return { err }
      const meta = res.find(m => m.topicName === a.topic && m.partition === p)
      return { offset: meta && meta.baseOffset !== undefined ? Number(meta.baseOffset) : -1 }
    },
    describe: err => ({ exception: err.type || err.name, message: err.message }),
    together: () => cfg.driver.sendBatch,
    notSent: { name: 'KafkaJSNotSent', message: 'not sent before the stop' },
  })
  let tx = null

  await producer.connect()
  process.stderr.write(`kafkajs driver: kafkajs ${require('kafkajs/package.json').version}, node ${process.version}\n`)
  emit({ name: 'startup_complete' })

  if (a.transactionalId) {
    await runTransactions(a, {
      begin: async () => { tx = await producer.transaction(); q.sender = tx },
      send: q.push,
      flush: q.drain,
      // A transaction's sends end where its ending begins: a send
      // settling meanwhile leaves what is queued unsent.
      commit: () => { q.sender = null; return tx.commit() },
      abort: () => { q.sender = null; return tx.abort() },
      describe: err => ({ exception: errorName(err), message: errorMessage(err) }),
      fenced,
      stopped: () => false,
    })
  } else {
    q.sender = producer
    await q.produce()
  }
  q.finish()
  await producer.disconnect().catch(() => {})
  emit({ name: 'tool_data', sent: q.sent, acked: q.acked })
  emit({ name: 'shutdown_complete' })
}

main().then(() => process.exit(0), err => {
  process.stderr.write(`kafkajs driver: ${err && err.message}\n`)
  process.exit(2)
})
