#!/usr/bin/env node
// driver.js is kconform's KafkaJS driver: KafkaJS's idempotent producer
// (idempotent: true, maxInFlightRequests: 1, the settings KafkaJS's
// Transactions guide gives for exactly-once) behind kconform's driver contract (docs/clients.md): settings from
// flags or KCONFORM_* environment variables, one JSON event per line on
// stdout, the client's own logs on stderr, and a clean stop on SIGTERM.
//
// Each partition has at most one producer.send() under way, holding every
// record queued for it since the last one (a linger of one round trip):
// a send's outcome is then exactly its records' outcome. KafkaJS rejects a
// send that spans brokers as a whole even when some brokers wrote their
// part, so a send across partitions could not report records one by one.
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

const { PAYLOAD_PREFIX, STOP_GRACE_MS, parseArgs, settingValue, put, emit, runTransactions } = require('../js/contract.js')
const QUEUE_LIMIT = 10000 // records waiting per partition before the generator waits, like a client's buffer

const PRODUCER_OPTIONS = new Set(['metadataMaxAge', 'maxInFlightRequests', 'idempotent', 'allowAutoTopicCreation', 'transactionTimeout'])

function configs(a) {
  const client = { clientId: 'kconform', brokers: a.brokers.split(','), logLevel: logLevel.INFO }
  const producer = { idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false }
  if (a.transactionalId) producer.transactionalId = a.transactionalId
  const send = { acks: -1 }
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
  // What sends: the producer, or in a transactional run the transaction
  // under way (tx) until its ending begins, and nothing between
  // transactions.
  let sender = a.transactionalId ? null : producer
  let tx = null
  let stopping = false
  let wake = () => {}
  const stop = () => { stopping = true; wake() }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)

  let sent = 0; let acked = 0
  const queues = Array.from({ length: a.partitions }, () => [])
  const busy = new Array(a.partitions).fill(null)
  const inFlight = new Array(a.partitions).fill(null) // the records of busy[p]

  const outcome = (part, recs, err, meta) => {
    for (let i = 0; i < recs.length; i++) {
      const r = recs[i]
      const base = { topic: a.topic, partition: part, counter: r.counter, run_id: a.runId, value: r.value, txn: r.txn }
      if (err) {
        emit({ name: 'producer_send_error', ...base, exception: err.type || err.name, message: err.message })
      } else {
        acked++
        const off = meta && meta.baseOffset !== undefined ? Number(meta.baseOffset) + i : -1
        emit({ name: 'producer_send_success', ...base, offset: off })
      }
      if (r.settle) r.settle(err)
    }
  }

  // sendBatch mode: one sendBatch() under way for every partition, marked
  // busy on each partition it carries.
  let batchBusy = null
  const flushBatch = () => {
    if (batchBusy) return
    if (!sender) return
    const parts = []
    for (let p = 0; p < a.partitions; p++) if (queues[p].length) parts.push(p)
    if (parts.length === 0) return
    const carried = parts.map(p => { const recs = queues[p]; queues[p] = []; inFlight[p] = recs; return [p, recs] })
    batchBusy = sender.sendBatch({
      ...cfg.send,
      topicMessages: [{ topic: a.topic, messages: carried.flatMap(([p, recs]) => recs.map(r => ({ value: r.value, partition: p }))) }],
    }).then(res => {
      for (const [p, recs] of carried) outcome(p, recs, null, res.find(m => m.topicName === a.topic && m.partition === p))
    }, err => {
      for (const [p, recs] of carried) outcome(p, recs, err)
    }).finally(() => {
      for (const [p] of carried) { busy[p] = null; inFlight[p] = null }
      batchBusy = null
      flushBatch()
      wake()
    })
    for (const [p] of carried) busy[p] = batchBusy
  }

  const flush = (part) => {
    if (!sender) return
    if (cfg.driver.sendBatch) return flushBatch()
    if (busy[part] || queues[part].length === 0) return
    const recs = queues[part]; queues[part] = []
    inFlight[part] = recs
    busy[part] = sender.send({
      ...cfg.send, topic: a.topic,
      messages: recs.map(r => ({ value: r.value, partition: part })),
    }).then(res => {
      const meta = res.find(m => m.partition === part)
      outcome(part, recs, null, meta)
    }, err => outcome(part, recs, err)).finally(() => {
      busy[part] = null
      inFlight[part] = null
      flush(part)
      wake()
    })
  }

  // drain sends every queued record and waits for every send under way to
  // settle, or until deadline() passes.
  const drain = async deadline => {
    for (;;) {
      for (let p = 0; p < a.partitions; p++) flush(p)
      const pending = busy.filter(Boolean)
      const left = deadline() - Date.now()
      if (pending.length === 0 || left < 0) return
      // A second at most, so that a deadline moved closer (the stop) counts.
      await Promise.race([Promise.allSettled(pending), new Promise(r => setTimeout(r, Math.min(left, 1000)))])
    }
  }

  await producer.connect()
  process.stderr.write(`kafkajs driver: kafkajs ${require('kafkajs/package.json').version}, node ${process.version}\n`)
  emit({ name: 'startup_complete' })

  if (a.transactionalId) {
    await runTransactions(a, {
      begin: async () => { tx = await producer.transaction(); sender = tx },
      send: r => {
        queues[r.partition].push(r)
        sent++
        flush(r.partition)
      },
      flush: drain,
      // A transaction's sends end where its ending begins: a send
      // settling meanwhile leaves what is queued unsent.
      commit: () => { sender = null; return tx.commit() },
      abort: () => { sender = null; return tx.abort() },
      describe: err => ({ exception: errorName(err), message: errorMessage(err) }),
      fenced,
      stopped: () => false,
    })
  }

  const counters = new Array(a.partitions).fill(0)
  const interval = a.rate > 0 ? 1000 / a.rate : 0
  const start = Date.now()
  for (let i = 0; !stopping && !a.transactionalId && (a.count === 0 || i < a.count); i++) {
    const part = i % a.partitions
    while (queues[part].length >= QUEUE_LIMIT && !stopping) {
      await new Promise(r => { wake = r })
    }
    if (stopping) break
    const c = counters[part]++
    queues[part].push({ counter: c, value: `${PAYLOAD_PREFIX}${a.runId}:${part}:${c}` })
    sent++
    flush(part)
    if (interval > 0) {
      const due = start + (i + 1) * interval - Date.now()
      if (due > 0) await new Promise(r => { const t = setTimeout(r, due); wake = () => { clearTimeout(t); r() } })
    } else if (i % 100 === 99) {
      await new Promise(r => setImmediate(r))
    }
  }
  // Records under way still get their outcome, within kconform's stop
  // grace. A transactional run gave its records theirs before each
  // transaction ended: what is left it must not send outside one.
  if (!a.transactionalId) {
    const deadline = Date.now() + STOP_GRACE_MS
    await drain(() => deadline)
  }
  for (let p = 0; p < a.partitions; p++) {
    if (queues[p].length) outcome(p, queues[p], { name: 'KafkaJSNotSent', message: 'not sent before the stop' })
    queues[p] = []
    // A send() still unsettled: its records have no outcome, and say so.
    for (const r of inFlight[p] || []) {
      emit({ name: 'producer_send_pending', topic: a.topic, partition: p, counter: r.counter, run_id: a.runId, value: r.value, txn: r.txn })
    }
    inFlight[p] = null
  }
  await producer.disconnect().catch(() => {})
  emit({ name: 'tool_data', sent, acked })
  emit({ name: 'shutdown_complete' })
}

main().then(() => process.exit(0), err => {
  process.stderr.write(`kafkajs driver: ${err && err.message}\n`)
  process.exit(2)
})
