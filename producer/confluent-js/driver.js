#!/usr/bin/env node
// driver.js is kconform's driver for Confluent's JavaScript client
// (@confluentinc/kafka-javascript): its node-rdkafka-style Producer, which is
// librdkafka underneath, with enable.idempotence=true and acks=all and the
// client's defaults otherwise, behind kconform's driver contract
// (docs/clients.md): settings from flags or KCONFORM_* environment
// variables, one JSON event per line on stdout, the client's own logs on
// stderr, and a clean stop on SIGTERM.
//
// This API, not the KafkaJS-compatible one, is used because it takes
// librdkafka's settings as they are (the librdkafka family's names reach it
// unchanged) and reports each record's delivery with its offset.
//
//   driver.js --brokers a,b --topic t --partitions n --run-id id
//             [--count n] [--rate r] [--set key=value]...
//
// A --set key is a librdkafka setting in librdkafka's own spelling
// (message.timeout.ms, linger.ms, ...), passed through as a string.
//
// Given --transactional-id (with --transaction-size and --abort-every) it
// runs transactions as contract.js's runTransactions has it, with
// transactional.id set: initTransactions() once before the first, then
// beginTransaction(), produce() of its records, flush() until each has
// its delivery report, and commitTransaction() or abortTransaction().
'use strict'
const Kafka = require('@confluentinc/kafka-javascript')

const { PAYLOAD_PREFIX, STOP_GRACE_MS, parseArgs, emit, producerFatal, runTransactions } = require('../js/contract.js')
const ERR = Kafka.CODES.ERRORS
const ERR_NAMES = Object.fromEntries(Object.entries(ERR).map(([k, v]) => [v, k]))

function config(a) {
  // kconform:driver-settings begin (each listed with the library's reason in driver/own.go and docs/clients.md)
  const conf = {
    'bootstrap.servers': a.brokers,
    'enable.idempotence': true,
    acks: 'all',
    // Delivery reports for every record, each with its opaque.
    dr_cb: true,
  }
  // kconform:driver-settings end
  if (a.transactionalId) conf['transactional.id'] = a.transactionalId
  for (const kv of a.set) {
    const i = kv.indexOf('=')
    if (i <= 0) throw new Error(`--set ${kv}: want key=value`)
    conf[kv.slice(0, i)] = kv.slice(i + 1)
  }
  return conf
}

function errName(err) {
  return ERR_NAMES[err.code] || err.name || 'error'
}

const sleep = ms => new Promise(r => setTimeout(r, ms))

// FENCED are the errors after which a transactional producer can do
// nothing but stop (librdkafka raises them as fatal errors too).
const FENCED = new Set([ERR.ERR__FENCED, ERR.ERR_PRODUCER_FENCED, ERR.ERR_INVALID_PRODUCER_EPOCH,
  ERR.ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ERR.ERR__FATAL])

// TXN_TIMEOUT_MS bounds initTransactions(), commitTransaction() and
// abortTransaction(), within kconform's stop grace.
const TXN_TIMEOUT_MS = STOP_GRACE_MS

// call runs one of the Producer's transactional methods as a promise.
function call(producer, method, ...args) {
  return new Promise((resolve, reject) => producer[method](...args, err => (err ? reject(err) : resolve())))
}

async function main() {
  const a = parseArgs(process.argv.slice(2))
  const producer = new Kafka.Producer(config(a))
  let stopping = false
  let wake = () => {}
  const stop = () => { stopping = true; wake() }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)

  let sent = 0; let acked = 0; let dead = false
  // Records handed to the client without an outcome yet, by opaque.
  const outstanding = new Set()

  producer.on('event.log', l => process.stderr.write(`${l.severity} ${l.fac}: ${l.message}\n`))
  producer.on('event.error', err => {
    if (err.code === ERR.ERR__FATAL || err.isFatal) {
      // librdkafka purges its queues itself on a fatal error; records in
      // flight still get their reports, or are pending at the stop. In a
      // transactional run the step that fails on it says so first, then
      // producer_fatal.
      if (a.transactionalId) process.stderr.write(`confluent-js driver: fatal error: ${errName(err)}: ${err.message}\n`)
      else producerFatal({ exception: errName(err), message: err.message })
      dead = true
      stop()
    } else {
      process.stderr.write(`confluent-js driver: error: ${errName(err)}: ${err.message}\n`)
    }
  })
  // fatalRecord stops the producer on a record failed with ERR__FATAL:
  // librdkafka fails records so once a fatal error (e.g. "Unable to
  // reconstruct MessageSet") has killed the instance, and event.error
  // does not always bring that error here; an application must stop.
  const fatalRecord = err => {
    if (err.code !== ERR.ERR__FATAL || dead || a.transactionalId) return
    producerFatal({ exception: errName(err), message: `a record failed with librdkafka's fatal error: ${err.message}` })
    dead = true
    stop()
  }
  producer.on('delivery-report', (err, report) => {
    const r = report && report.opaque
    if (!r || !outstanding.has(r)) return
    outstanding.delete(r)
    const base = { topic: a.topic, partition: r.partition, counter: r.counter, run_id: a.runId, value: r.value, txn: r.txn }
    if (err) {
      emit({ name: 'producer_send_error', ...base, exception: errName(err), message: err.message })
      fatalRecord(err)
    } else {
      acked++
      emit({ name: 'producer_send_success', ...base, offset: Number(report.offset) })
    }
    if (r.settle) r.settle(err)
  })

  await new Promise((resolve, reject) => {
    producer.connect({ topic: a.topic, timeout: 30000 }, err => (err ? reject(err) : resolve()))
  })
  producer.setPollInterval(10)
  // The producer id comes before the first record, as the idempotent
  // producer's does at connect.
  if (a.transactionalId) await call(producer, 'initTransactions', TXN_TIMEOUT_MS)
  process.stderr.write(`confluent-js driver: @confluentinc/kafka-javascript ${require('@confluentinc/kafka-javascript/package.json').version}, ` +
    `librdkafka ${Kafka.librdkafkaVersion}, node ${process.version}\n`)
  emit({ name: 'startup_complete' })

  // produce hands record r to the client, or reports it failed.
  const produce = async r => {
    for (;;) {
      try {
        producer.produce(a.topic, r.partition, Buffer.from(r.value), null, null, r)
        outstanding.add(r)
        sent++
      } catch (err) {
        // A full queue waits for delivery reports to make room, as the
        // other drivers do; anything else fails the record.
        if (err.code === ERR.ERR__QUEUE_FULL && !stopping) { await sleep(10); continue }
        sent++
        emit({ name: 'producer_send_error', topic: a.topic, partition: r.partition, counter: r.counter, run_id: a.runId, value: r.value,
          txn: r.txn, exception: errName(err), message: err.message })
        fatalRecord(err)
        if (r.settle) r.settle(err)
      }
      return
    }
  }
  // flushed flushes for up to half a second, and says whether the client
  // took it: flush throws once the client has disconnected itself, and
  // nothing more will come then.
  const flushed = () => new Promise(res => {
    try { producer.flush(500, () => res(true)) } catch { res(false) }
  })

  if (a.transactionalId) {
    await runTransactions(a, {
      begin: () => call(producer, 'beginTransaction'),
      send: produce,
      flush: async deadline => {
        while (outstanding.size > 0 && Date.now() < deadline() && await flushed()) await sleep(10)
      },
      commit: () => call(producer, 'commitTransaction', TXN_TIMEOUT_MS),
      abort: () => call(producer, 'abortTransaction', TXN_TIMEOUT_MS),
      describe: err => ({ exception: errName(err), message: err.message }),
      fenced: err => Boolean(err.isFatal) || FENCED.has(err.code),
      stopped: () => dead,
    })
    // A fatal error between transactions has had no step to say it.
    if (dead) producerFatal({ message: 'librdkafka raised a fatal error (in the log); stopping' })
  }

  const counters = new Array(a.partitions).fill(0)
  const interval = a.rate > 0 ? 1000 / a.rate : 0
  const start = Date.now()
  for (let i = 0; !stopping && !a.transactionalId && (a.count === 0 || i < a.count); i++) {
    const part = i % a.partitions
    const c = counters[part]++
    await produce({ partition: part, counter: c, value: `${PAYLOAD_PREFIX}${a.runId}:${part}:${c}` })
    if (interval > 0) {
      const due = start + (i + 1) * interval - Date.now()
      if (due > 0) await new Promise(res => { const t = setTimeout(res, due); wake = () => { clearTimeout(t); res() } })
    } else if (i % 100 === 99) {
      await new Promise(res => setImmediate(res))
    }
  }
  // Records under way still get their outcome, within kconform's stop
  // grace; the poll interval delivers their reports. A transactional run
  // gave its records theirs before each transaction ended: a second is
  // left for the reports of any an abort purged.
  const deadline = Date.now() + (a.transactionalId ? 1000 : STOP_GRACE_MS)
  while (outstanding.size > 0 && Date.now() < deadline && await flushed()) {
    await sleep(10)
  }
  // Records the client still holds: no outcome, and they say so.
  for (const r of outstanding) {
    emit({ name: 'producer_send_pending', topic: a.topic, partition: r.partition, counter: r.counter, run_id: a.runId, value: r.value, txn: r.txn })
  }
  outstanding.clear()
  await Promise.race([new Promise(res => {
    try { producer.disconnect(1000, () => res()) } catch { res() }
  }), sleep(5000)])
  emit({ name: 'tool_data', sent, acked })
  emit({ name: 'shutdown_complete' })
}

main().then(() => process.exit(0), err => {
  process.stderr.write(`confluent-js driver: ${err && err.message}\n`)
  process.exit(2)
})
