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
'use strict'
const Kafka = require('@confluentinc/kafka-javascript')

const { PAYLOAD_PREFIX, parseArgs, emit } = require('../js/contract.js')
const ERR = Kafka.CODES.ERRORS
const ERR_NAMES = Object.fromEntries(Object.entries(ERR).map(([k, v]) => [v, k]))

function config(a) {
  const conf = {
    'bootstrap.servers': a.brokers,
    'enable.idempotence': true,
    acks: 'all',
    // Delivery reports for every record, each with its opaque.
    dr_cb: true,
  }
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
      // flight still get their reports, or are pending at the stop.
      if (!dead) emit({ name: 'producer_fatal', exception: errName(err), message: err.message })
      dead = true
      stop()
    } else {
      process.stderr.write(`confluent-js driver: error: ${errName(err)}: ${err.message}\n`)
    }
  })
  producer.on('delivery-report', (err, report) => {
    const r = report && report.opaque
    if (!r || !outstanding.has(r)) return
    outstanding.delete(r)
    const base = { topic: a.topic, partition: r.partition, counter: r.counter, run_id: a.runId, value: r.value }
    if (err) {
      emit({ name: 'producer_send_error', ...base, exception: errName(err), message: err.message })
    } else {
      acked++
      emit({ name: 'producer_send_success', ...base, offset: Number(report.offset) })
    }
  })

  await new Promise((resolve, reject) => {
    producer.connect({ topic: a.topic, timeout: 30000 }, err => (err ? reject(err) : resolve()))
  })
  producer.setPollInterval(10)
  process.stderr.write(`confluent-js driver: @confluentinc/kafka-javascript ${require('@confluentinc/kafka-javascript/package.json').version}, ` +
    `librdkafka ${Kafka.librdkafkaVersion}, node ${process.version}\n`)
  emit({ name: 'startup_complete' })

  const counters = new Array(a.partitions).fill(0)
  const interval = a.rate > 0 ? 1000 / a.rate : 0
  const start = Date.now()
  for (let i = 0; !stopping && (a.count === 0 || i < a.count); i++) {
    const part = i % a.partitions
    const c = counters[part]++
    const r = { partition: part, counter: c, value: `${PAYLOAD_PREFIX}${a.runId}:${part}:${c}` }
    for (;;) {
      try {
        producer.produce(a.topic, part, Buffer.from(r.value), null, null, r)
        outstanding.add(r)
        sent++
      } catch (err) {
        // A full queue waits for delivery reports to make room, as the
        // other drivers do; anything else fails the record.
        if (err.code === ERR.ERR__QUEUE_FULL && !stopping) { await sleep(10); continue }
        sent++
        emit({ name: 'producer_send_error', topic: a.topic, partition: part, counter: c, run_id: a.runId, value: r.value,
          exception: errName(err), message: err.message })
      }
      break
    }
    if (interval > 0) {
      const due = start + (i + 1) * interval - Date.now()
      if (due > 0) await new Promise(res => { const t = setTimeout(res, due); wake = () => { clearTimeout(t); res() } })
    } else if (i % 100 === 99) {
      await new Promise(res => setImmediate(res))
    }
  }
  // Records under way still get their outcome, within kconform's stop
  // grace; the poll interval delivers their reports.
  // flush throws once the client has disconnected itself: nothing more
  // will come then.
  const flushed = () => new Promise(res => {
    try { producer.flush(500, () => res(true)) } catch { res(false) }
  })
  const deadline = Date.now() + 20000
  while (outstanding.size > 0 && Date.now() < deadline && await flushed()) {
    await sleep(10)
  }
  // Records the client still holds: no outcome, and they say so.
  for (const r of outstanding) {
    emit({ name: 'producer_send_pending', topic: a.topic, partition: r.partition, counter: r.counter, run_id: a.runId, value: r.value })
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
