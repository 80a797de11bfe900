#!/usr/bin/env python3
import argparse, json, signal, sys, time
from confluent_kafka import Producer

a = argparse.ArgumentParser()
for f in ("--brokers", "--topic", "--run-id"): a.add_argument(f)
a.add_argument("--partitions", type=int); a.add_argument("--count", type=int); a.add_argument("--rate", type=float)
a.add_argument("--set", action="append", default=[])
args = a.parse_args()
conf = {"bootstrap.servers": args.brokers, "enable.idempotence": True, "acks": "all"}
conf.update(kv.split("=", 1) for kv in args.set)
p = Producer(conf)
emit = lambda **e: print(json.dumps({"timestamp": int(time.time() * 1000), **e}), flush=True)

def report(err, msg):
    part, value = msg.partition(), msg.value().decode()
    if err: emit(name="producer_send_error", topic=msg.topic(), partition=part, value=value, exception=err.name(), message=err.str())
    else:   emit(name="producer_send_success", topic=msg.topic(), partition=part, offset=msg.offset(), value=value)

stop = False
signal.signal(signal.SIGTERM, lambda *_: globals().update(stop=True))
emit(name="startup_complete")
counters, i = [0] * args.partitions, 0
while not stop and (args.count == 0 or i < args.count):
    part = i % args.partitions
    p.produce(args.topic, value=f"kc:{args.run_id}:{part}:{counters[part]}", partition=part, on_delivery=report)
    counters[part] += 1; i += 1
    p.poll(1 / args.rate if args.rate else 0)
p.flush(20)
emit(name="shutdown_complete")
