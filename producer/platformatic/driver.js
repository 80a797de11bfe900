#!/usr/bin/env node
// driver.js is kconform's @platformatic/kafka driver: its idempotent
// producer (idempotent: true, acks: -1) behind kconform's driver contract
// (docs/clients.md): settings from flags or KCONFORM_* environment
// variables, one JSON event per line on stdout, the client's own logs on
// stderr, and a clean stop on SIGTERM.
//
// @platformatic/kafka does not batch: each producer.send() is one Produce
// request per leader broker, holding that send's records. Its idempotent
// producer keeps one request in flight per connection and retries a failed
// send without limit. Each partition here has at most one send() under way,
// holding every record queued for it since the last one (a linger of one
// round trip), so a send's outcome is exactly its records' outcome and its
// answer's base offset numbers them.
//
//   driver.js --brokers a,b --topic t --partitions n --run-id id
//             [--count n] [--rate r] [--set key=value]...
//
// A --set key is a Producer option in @platformatic/kafka's own spelling
// (metadataMaxAge, retryDelay, requestTimeout, timeout, retries, ...),
// nested with dots (tls.rejectUnauthorized); values are read as JSON
// (numbers, booleans) or else as strings.
//
// Given --transactional-id (with --transaction-size and --abort-every) it
// runs transactions as contract.js's runTransactions has it, with the
// Producer's transactionalId: beginTransaction() begins each (its first
// also asks for the producer id), the Transaction's send() carries its
// records, and its commit() or abort() ends it. One send() is under way
// at a time, holding every record queued since the last, of every
// partition: the client adds a send's partitions to the transaction
// (AddPartitionsToTxn) through a deduplicated operation that answers
// concurrent calls with the first one's outcome, so of several sends at
// once only the first one's partitions join it and the others' records
// fail INVALID_TXN_STATE (or, on a broker that does not check, are written
// outside it). That is dist/clients/producer/producer.js:387
// (kPerformDeduplicated('addPartitionsToTransaction')) with
// dist/clients/producer/transaction.js:86-90, which marks the partitions
// added all the same, at 2.12.1. The driver's one setting,
// driver.sendPerPartition=true, sends as in an idempotent run instead, one
// send() per partition under way, the path of that bug.
'use strict'
const path = require('node:path')
const { pathToFileURL } = require('node:url')

const { parseArgs, settingValue, put, emit, runTransactions, partitionQueues } = require('../js/contract.js')

function options(a) {
  // kconform:driver-settings begin (each listed with the library's reason in driver/own.go and docs/clients.md)
  const opts = {
    clientId: 'kconform', bootstrapBrokers: a.brokers.split(','),
    idempotent: true, acks: -1, autocreateTopics: false,
  }
  // kconform:driver-settings end
  if (a.transactionalId) opts.transactionalId = a.transactionalId
  const driver = { sendPerPartition: false }
  for (const kv of a.set) {
    const i = kv.indexOf('=')
    if (i <= 0) throw new Error(`--set ${kv}: want key=value`)
    const key = kv.slice(0, i); const value = settingValue(kv.slice(i + 1))
    if (key === 'driver.sendPerPartition') driver.sendPerPartition = value === true || value === 'true'
    else if (key.startsWith('driver.')) throw new Error(`--set ${kv}: the driver's only own setting is driver.sendPerPartition`)
    else put(opts, key, value)
  }
  return { opts, driver }
}

function log(msg) {
  process.stderr.write(`${new Date().toISOString()} platformatic driver: ${msg}\n`)
}

// errorName is the most specific name an error carries: a Kafka error's
// name (OUT_OF_ORDER_SEQUENCE_NUMBER) found in its chain, else its code
// (PLT_KFK_TIMEOUT) or class.
function errorName(err) {
  const seen = new Set()
  const walk = e => {
    if (!e || typeof e !== 'object' || seen.has(e)) return null
    seen.add(e)
    if (e.apiId) return String(e.apiId)
    for (const inner of [...(e.errors || []), e.cause]) {
      const n = walk(inner)
      if (n) return n
    }
    return null
  }
  return walk(err) || (err && (err.code || err.name)) || 'Error'
}

// errorMessage is an error's message with those of the errors it gathers
// (a MultipleErrors says only "Producing messages failed.").
function errorMessage(err) {
  const parts = []
  const seen = new Set()
  const walk = (e, depth) => {
    if (!e || typeof e !== 'object' || seen.has(e) || depth > 4) return
    seen.add(e)
    if (e.message && !parts.includes(e.message)) parts.push(e.message)
    for (const inner of [...(e.errors || []), e.cause]) walk(inner, depth + 1)
  }
  walk(err, 0)
  return parts.join(' | ') || String(err)
}

async function main() {
  const a = parseArgs(process.argv.slice(2))
  const { opts, driver } = options(a)
  // The package is an ES module, found on NODE_PATH (the install in
  // kconform's cache): resolve it as CommonJS does, then import it.
  const entry = require.resolve('@platformatic/kafka')
  const kafka = await import(pathToFileURL(entry).href)
  // Its exports hide package.json; dist/version.js says the same.
  const { version } = await import(pathToFileURL(path.join(path.dirname(entry), 'version.js')).href)
  const producer = new kafka.Producer(opts)
  for (const ev of ['client:broker:connect', 'client:broker:disconnect', 'client:broker:failed']) {
    producer.on(ev, p => log(`${ev.slice(7)} ${p && p.broker ? `${p.broker.host}:${p.broker.port}` : ''}`))
  }
  producer.on('client:performWithRetry:retry', (op, attempt, retries, delay) => log(`retry ${op}: attempt ${attempt + 1} in ${delay} ms`))
  producer.on('client:performWithRetry:failed', (op, retries, errors) => log(`${op} failed: ${errorMessage({ errors })}`))

  // What sends: see contract.js's partitionQueues; in a transactional run
  // one send() under way for every partition (see the top of the file).
  const together = a.transactionalId && !driver.sendPerPartition
  let tx = null
  let pid = ''
  const notePid = () => {
    const now = `${producer.producerId}/${producer.producerEpoch}`
    if (now !== pid) { pid = now; log(`producer id ${producer.producerId}, epoch ${producer.producerEpoch}`) }
  }
  const offsetIn = (res, p) => {
    const found = res && res.offsets && res.offsets.find(o => o.topic === a.topic && o.partition === p)
    return found ? Number(found.offset) : -1
  }
  const q = partitionQueues(a, {
    send: (sender, carried) => sender.send({
      messages: carried.flatMap(([p, recs]) => recs.map(r => ({ topic: a.topic, partition: p, value: Buffer.from(r.value) }))),
    }),
    result: (p, err, res) => {
      notePid()
      if (!err) return { offset: offsetIn(res, p) }
      // A send of every partition fails as a whole, but its error keeps
      // the offsets of the partitions whose leaders wrote them.
      const produced = together && err.produced
      const written = produced && produced.offsets && produced.offsets.some(o => o.topic === a.topic && o.partition === p)
      return written ? { offset: offsetIn(produced, p) } : { err }
    },
    describe: err => ({ exception: errorName(err), message: errorMessage(err) }),
    together: () => together,
    notSent: { name: 'NotSent', message: 'not sent before the stop' },
  })

  // The producer id is asked for before the first record, as KafkaJS's
  // connect() does; a send would ask for it otherwise. A transactional
  // producer's comes with its first beginTransaction().
  if (!a.transactionalId) {
    await Promise.race([producer.initIdempotentProducer({}), q.stopped])
    if (!q.stopping) notePid()
  }
  log(`@platformatic/kafka ${version}, node ${process.version}`)
  emit({ name: 'startup_complete' })

  if (a.transactionalId) {
    await runTransactions(a, {
      begin: async () => { tx = await producer.beginTransaction(); q.sender = tx; notePid() },
      send: q.push,
      flush: q.drain,
      // A transaction's sends end where its ending begins: a send
      // settling meanwhile leaves what is queued unsent.
      commit: () => { q.sender = null; return tx.commit() },
      abort: () => { q.sender = null; return tx.abort() },
      describe: err => ({ exception: errorName(err), message: errorMessage(err) }),
      fenced: err => ['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED'].includes(errorName(err)),
      stopped: () => false,
    })
  } else {
    q.sender = producer
    await q.produce()
  }
  q.finish()
  // A send still retrying keeps close() waiting: force it, bounded.
  await Promise.race([producer.close(true).catch(e => log(`close: ${errorMessage(e)}`)), new Promise(r => setTimeout(r, 5000))])
  emit({ name: 'tool_data', sent: q.sent, acked: q.acked })
  emit({ name: 'shutdown_complete' })
}

main().then(() => process.exit(0), err => {
  process.stderr.write(`platformatic driver: ${err && errorMessage(err)}\n`)
  process.exit(2)
})
