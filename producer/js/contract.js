// contract.js is the driver contract (docs/clients.md) shared by kconform's
// Node.js drivers (kafkajs, platformatic, confluent-js), as contract.py is
// for the Python ones: settings from flags or KCONFORM_* environment
// variables, --set values, one JSON event per line on stdout, the
// transactional run's loop (runTransactions), which the drivers feed with
// their client's steps, and the per-partition send queues of the clients
// that answer a send as a whole (partitionQueues).
'use strict'

// PAYLOAD_PREFIX starts every record value: kc:<run id>:<partition>:<counter>.
const PAYLOAD_PREFIX = 'kc:'

// STOP_GRACE_MS is how long records under way at the stop get for their
// outcome: kconform kills a driver 30 s after SIGTERM.
const STOP_GRACE_MS = 20000

// parseArgs reads the contract's flags, each falling back to its KCONFORM_*
// variable.
function parseArgs(argv) {
  const env = process.env
  const a = {
    brokers: env.KCONFORM_BROKERS || '', topic: env.KCONFORM_TOPIC || '',
    partitions: Number(env.KCONFORM_PARTITIONS || 1), count: Number(env.KCONFORM_COUNT || 0),
    rate: Number(env.KCONFORM_RATE || 0), runId: env.KCONFORM_RUN_ID || '', set: [],
    // Given only in a transactional run.
    transactionalId: '', transactionSize: 0, abortEvery: 0,
  }
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]]
    if (value === undefined) throw new Error(`${flag}: missing value`)
    switch (flag) {
      case '--brokers': a.brokers = value; break
      case '--topic': a.topic = value; break
      case '--partitions': a.partitions = Number(value); break
      case '--count': a.count = Number(value); break
      case '--rate': a.rate = Number(value); break
      case '--run-id': a.runId = value; break
      case '--set': a.set.push(value); break
      case '--transactional-id': a.transactionalId = value; break
      case '--transaction-size': a.transactionSize = Number(value); break
      case '--abort-every': a.abortEvery = Number(value); break
      default: throw new Error(`unknown flag ${flag}`)
    }
  }
  if (!a.brokers || !a.topic || !a.runId || !(a.partitions >= 1)) {
    throw new Error('need --brokers, --topic, --run-id and --partitions >= 1')
  }
  if (a.transactionalId && !(a.transactionSize >= 1 && a.abortEvery >= 0)) {
    throw new Error('--transactional-id needs --transaction-size >= 1 and --abort-every >= 0')
  }
  return a
}

// settingValue reads a --set value as the JSON type it spells (numbers,
// booleans), or as a string.
function settingValue(v) {
  try { return JSON.parse(v) } catch { return v }
}

// put sets a dotted key (retry.maxRetryTime) in a nested options object.
function put(obj, path, value) {
  const keys = path.split('.')
  let o = obj
  for (const k of keys.slice(0, -1)) o = (o[k] = o[k] || {})
  o[keys[keys.length - 1]] = value
}

// emit writes one event line; stdout is a pipe, whose writes Node keeps in
// order.
function emit(e) {
  process.stdout.write(JSON.stringify({ timestamp: Date.now(), ...e }) + '\n')
}

// producerFatal prints producer_fatal once: a driver may learn of the same
// end from its client's error event and from a failed step.
let fatalSaid = false
function producerFatal(e) {
  if (fatalSaid) return
  fatalSaid = true
  emit({ name: 'producer_fatal', ...e })
}

// runTransactions runs a transactional run as docs/clients.md's point 4
// has it, as the bundled Go producer does (producer/txn.go): transaction k
// begins once its first record is due, takes the next --transaction-size
// records round-robin (counters go on across transactions), flushes them,
// then aborts when it is an --abort-every-th one or a record of it failed
// or has no outcome, else commits; a failed commit is followed by an abort
// unless the producer was fenced. A step that fails is printed with its
// error; a failed begin or abort, or a fenced commit, ends the run after
// producer_fatal, as an application must stop. On SIGTERM no new record or
// transaction starts, and the one under way ends as due.
//
// t is the client's side:
//   begin(k), commit(k), abort(k)  promises of the client's steps;
//   send(r)      hands record r ({partition, counter, value, txn}) over;
//                the driver prints its outcome (with r.txn) and then calls
//                r.settle(err);
//   flush(deadline)  resolves once every record handed over has its
//                outcome, or at deadline() (ms since the epoch; Infinity
//                until the stop);
//   describe(err)    the error's {exception, message};
//   fenced(err)      whether err leaves the producer nothing to do but stop;
//   stopped()        whether the driver stopped on its own (a fatal error).
async function runTransactions(a, t) {
  let stopAt = 0
  let wake = () => {}
  const onStop = () => { if (!stopAt) stopAt = Date.now(); wake() }
  process.on('SIGTERM', onStop)
  process.on('SIGINT', onStop)
  const stopping = () => {
    if (!stopAt && t.stopped()) stopAt = Date.now()
    return stopAt > 0
  }
  const deadline = () => (stopping() ? stopAt + STOP_GRACE_MS : Infinity)

  const counters = new Array(a.partitions).fill(0)
  const interval = a.rate > 0 ? 1000 / a.rate : 0
  const start = Date.now()
  let i = 0 // records handed over
  const more = () => a.count === 0 || i < a.count
  // due waits for record i's time, and says whether it is still to be sent.
  const due = async () => {
    const wait = interval > 0 ? start + i * interval - Date.now() : 0
    if (wait > 0 && !stopping()) {
      await new Promise(r => { const timer = setTimeout(r, wait); wake = () => { clearTimeout(timer); r() } })
      wake = () => {}
    } else if (interval === 0 && i % 100 === 99) {
      await new Promise(r => setImmediate(r))
    }
    return !stopping()
  }

  for (let k = 0; more() && await due(); k++) {
    const step = (name, err) => emit({ name, txn: k, transactional_id: a.transactionalId, ...(err ? t.describe(err) : {}) })
    const fatal = (what, err) => producerFatal({ txn: k,
      message: `transaction ${k}: ${what}: ${t.describe(err).message}; stopping, as the producer can go no further` })
    try {
      await t.begin(k)
    } catch (err) {
      step('transaction_begin', err)
      fatal('begin failed', err)
      break
    }
    step('transaction_begin')

    let sent = 0; let settled = 0; let failed = 0
    do {
      const part = i % a.partitions
      const c = counters[part]++
      i++; sent++
      await t.send({ partition: part, counter: c, value: `${PAYLOAD_PREFIX}${a.runId}:${part}:${c}`, txn: k,
        settle: err => { settled++; if (err) failed++ } })
    } while (sent < a.transactionSize && more() && await due())
    // A transaction ends only once its records are written or failed.
    await t.flush(deadline)

    const commit = !(a.abortEvery > 0 && (k + 1) % a.abortEvery === 0) && failed === 0 && settled === sent
    if (commit) {
      try {
        await t.commit(k)
        step('transaction_commit')
        continue
      } catch (err) {
        step('transaction_commit', err)
        if (t.fenced(err)) {
          fatal('commit failed', err)
          break
        }
      }
    }
    try {
      await t.abort(k)
      step('transaction_abort')
    } catch (err) {
      step('transaction_abort', err)
      // A stopped driver's abort that fails short of a fence ran out of
      // the stop's grace, not the client: nothing fatal to report, and
      // its records are told as still pending.
      if (t.fenced(err) || !stopping()) fatal('abort failed', err)
      break
    }
  }
  process.removeListener('SIGTERM', onStop)
  process.removeListener('SIGINT', onStop)
}

// QUEUE_LIMIT is how many records wait per partition before the idempotent
// run's generator waits, like a client's buffer.
const QUEUE_LIMIT = 10000

// partitionQueues is the sending side shared by the drivers whose client
// reports a send's outcome as a whole (kafkajs, platformatic): each
// partition has at most one send under way, holding every record queued
// for it since the last one (a linger of one round trip), so a send's
// outcome is exactly its records' outcome; or, when c.together() says so,
// one send under way carries every partition's queued records. It holds
// the idempotent run's generator (produce), the stop on SIGTERM, and the
// driver's last events but tool_data and shutdown_complete (finish).
//
// c is the client's side:
//   send(sender, carried)  sends carried ([[partition, records], ...])
//                          through sender (the producer, or the
//                          transaction under way); a promise of the
//                          client's answer;
//   result(p, err, res)    the outcome of partition p's records in a
//                          send that answered res or failed with err:
//                          {err} when they failed, else {offset}, the
//                          first one's (-1 when unknown);
//   describe(err)          a failed record's {exception, message};
//   together()             whether one send carries every partition;
//   notSent                the error of records never sent at the stop.
//
// sender is what sends, set by the driver: the producer, or in a
// transactional run the transaction under way until its ending begins,
// and null between transactions (what is queued then waits).
function partitionQueues(a, c) {
  const q = { sender: null, sent: 0, acked: 0, stopping: false }
  const queues = Array.from({ length: a.partitions }, () => [])
  const busy = new Array(a.partitions).fill(null)
  const inFlight = new Array(a.partitions).fill(null) // the records of busy[p]
  let ended = false // pending records were reported: a later outcome (a close failing a send) is not printed

  // The generator waits either for room in a queue (woken by a settled
  // send) or for its next record's time (woken only by the stop, so that
  // acknowledgements do not push the rate above --rate).
  let roomWait = null
  let rateWait = null
  const room = () => { if (roomWait) roomWait() }
  let onStop = () => {}
  // stopped resolves at SIGTERM, for a driver's step that must not outlast it.
  q.stopped = new Promise(r => { onStop = r })
  const stop = () => { q.stopping = true; onStop(); room(); if (rateWait) rateWait() }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)

  const outcome = (part, recs, err, res) => {
    if (ended) return
    const r0 = c.result(part, err, res)
    for (let i = 0; i < recs.length; i++) {
      const r = recs[i]
      const base = { topic: a.topic, partition: part, counter: r.counter, run_id: a.runId, value: r.value, txn: r.txn }
      if (r0.err) {
        emit({ name: 'producer_send_error', ...base, ...c.describe(r0.err) })
      } else {
        q.acked++
        emit({ name: 'producer_send_success', ...base, offset: r0.offset >= 0 ? r0.offset + i : -1 })
      }
      if (r.settle) r.settle(r0.err)
    }
  }

  // sendNow sends the queued records of parts, marking the send busy on
  // each partition it carries, and when it settles sends what has been
  // queued meanwhile.
  const sendNow = parts => {
    const carried = parts.map(p => { const recs = queues[p]; queues[p] = []; inFlight[p] = recs; return [p, recs] })
    const sending = c.send(q.sender, carried).then(res => {
      for (const [p, recs] of carried) outcome(p, recs, null, res)
    }, err => {
      for (const [p, recs] of carried) outcome(p, recs, err)
    }).finally(() => {
      for (const [p] of carried) { busy[p] = null; inFlight[p] = null }
      if (c.together()) flush()
      else flush(parts[0])
      room()
    })
    for (const [p] of carried) busy[p] = sending
  }

  // flush sends partition part's queued records, or with c.together()
  // every partition's, unless a send for them is under way.
  const flush = part => {
    if (!q.sender) return
    if (c.together()) {
      if (busy.some(Boolean)) return
      const parts = []
      for (let p = 0; p < a.partitions; p++) if (queues[p].length) parts.push(p)
      if (parts.length) sendNow(parts)
      return
    }
    if (busy[part] || queues[part].length === 0) return
    sendNow([part])
  }

  // push queues record r ({partition, counter, value, txn, settle}) and
  // sends it when its partition has no send under way.
  q.push = r => {
    queues[r.partition].push(r)
    q.sent++
    flush(r.partition)
  }

  // drain sends every queued record and waits for every send under way to
  // settle, or until deadline() passes.
  q.drain = async deadline => {
    for (;;) {
      for (let p = 0; p < a.partitions; p++) flush(p)
      const pending = busy.filter(Boolean)
      const left = deadline() - Date.now()
      if (pending.length === 0 || left < 0) return
      // A second at most, so that a deadline moved closer (the stop) counts.
      await Promise.race([Promise.allSettled(pending), new Promise(r => setTimeout(r, Math.min(left, 1000)))])
    }
  }

  // produce is the idempotent run: --count records (or until the stop)
  // round-robin at --rate, then the records under way get their outcome
  // within kconform's stop grace.
  q.produce = async () => {
    const counters = new Array(a.partitions).fill(0)
    const interval = a.rate > 0 ? 1000 / a.rate : 0
    const start = Date.now()
    for (let i = 0; !q.stopping && (a.count === 0 || i < a.count); i++) {
      const part = i % a.partitions
      while (queues[part].length >= QUEUE_LIMIT && !q.stopping) {
        await new Promise(r => { roomWait = r })
        roomWait = null
      }
      if (q.stopping) break
      const n = counters[part]++
      q.push({ partition: part, counter: n, value: `${PAYLOAD_PREFIX}${a.runId}:${part}:${n}` })
      if (interval > 0) {
        const due = start + (i + 1) * interval - Date.now()
        if (due > 0) {
          await new Promise(r => { const t = setTimeout(r, due); rateWait = () => { clearTimeout(t); r() } })
          rateWait = null
        }
      } else if (i % 100 === 99) {
        await new Promise(r => setImmediate(r))
      }
    }
    const deadline = Date.now() + STOP_GRACE_MS
    await q.drain(() => deadline)
  }

  // finish reports what the stop left: queued records as not sent, and
  // those of a send still unsettled as pending, as they have no outcome.
  // A transactional run gave its records theirs before each transaction
  // ended: what is left it must not send outside one.
  q.finish = () => {
    for (let p = 0; p < a.partitions; p++) {
      if (queues[p].length) outcome(p, queues[p], c.notSent)
    }
    ended = true
    for (let p = 0; p < a.partitions; p++) {
      queues[p] = []
      for (const r of inFlight[p] || []) {
        emit({ name: 'producer_send_pending', topic: a.topic, partition: p, counter: r.counter, run_id: a.runId, value: r.value, txn: r.txn })
      }
      inFlight[p] = null
    }
  }
  return q
}

module.exports = { PAYLOAD_PREFIX, STOP_GRACE_MS, parseArgs, settingValue, put, emit, producerFatal, runTransactions, partitionQueues }
