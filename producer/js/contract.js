// contract.js is the driver contract (docs/clients.md) shared by kconform's
// Node.js drivers (kafkajs, platformatic, confluent-js), as contract.py is
// for the Python ones: settings from flags or KCONFORM_* environment
// variables, --set values, and one JSON event per line on stdout.
'use strict'

// PAYLOAD_PREFIX starts every record value: kc:<run id>:<partition>:<counter>.
const PAYLOAD_PREFIX = 'kc:'

// parseArgs reads the contract's flags, each falling back to its KCONFORM_*
// variable.
function parseArgs(argv) {
  const env = process.env
  const a = {
    brokers: env.KCONFORM_BROKERS || '', topic: env.KCONFORM_TOPIC || '',
    partitions: Number(env.KCONFORM_PARTITIONS || 1), count: Number(env.KCONFORM_COUNT || 0),
    rate: Number(env.KCONFORM_RATE || 0), runId: env.KCONFORM_RUN_ID || '', set: [],
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
      default: throw new Error(`unknown flag ${flag}`)
    }
  }
  if (!a.brokers || !a.topic || !a.runId || !(a.partitions >= 1)) {
    throw new Error('need --brokers, --topic, --run-id and --partitions >= 1')
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

module.exports = { PAYLOAD_PREFIX, parseArgs, settingValue, put, emit }
