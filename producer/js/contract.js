// contract.js is the driver contract (docs/clients.md) shared by kconform's
// Node.js drivers (kafkajs, platformatic, confluent-js), as contract.py is
// for the Python ones: settings from flags or KCONFORM_* environment
// variables, --set values, one JSON event per line on stdout, and the
// transactional run's loop (runTransactions), which the drivers feed with
// their client's steps.
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

module.exports = { PAYLOAD_PREFIX, STOP_GRACE_MS, parseArgs, settingValue, put, emit, producerFatal, runTransactions }
