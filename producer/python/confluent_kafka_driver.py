#!/usr/bin/env python3
"""kconform's confluent-kafka-python driver: the idempotent producer of
confluent-kafka-python (enable.idempotence=true, acks=all), which is
librdkafka underneath, behind kconform's driver contract (contract.py).

A --set key=value is a librdkafka setting, passed through as the string
given: librdkafka parses its own values. librdkafka batches records per
partition on its own threads; delivery reports come back through poll(),
which this driver calls between records, and each names its record's
partition and offset."""
import os
import signal
import sys
import time

import confluent_kafka

import contract


def main():
    a = contract.parse_args("confluent-kafka-python")
    stop = False
    dead = False

    def on_term(*_):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    def on_error(err):
        # A fatal error (the idempotent producer's sequence state is lost)
        # ends the client: every record it holds fails.
        nonlocal stop, dead
        if err.fatal():
            contract.emit(name="producer_fatal", exception=err.name(), message=err.str())
            dead = stop = True
        else:
            print(f"confluent-kafka driver: error: {err.name()}: {err.str()}", file=sys.stderr, flush=True)

    conf = {"bootstrap.servers": a.brokers, "enable.idempotence": True, "acks": "all",
            "client.id": "kconform", "error_cb": on_error}
    conf.update(contract.settings(a.set, typed=False))
    producer = confluent_kafka.Producer(conf)
    out = contract.Outcomes(a)
    print(f"confluent-kafka driver: confluent-kafka {confluent_kafka.version()[0]}, "
          f"librdkafka {confluent_kafka.libversion()[0]}, python {sys.version.split()[0]}", file=sys.stderr)
    contract.emit(name="startup_complete")

    def report(part, counter):
        def done(err, msg):
            if err is not None:
                out.error(part, counter, err, exception=err.name(), message=err.str())
            else:
                out.success(part, counter, msg.offset())
        return done

    counters = [0] * a.partitions
    interval = 1 / a.rate if a.rate > 0 else 0
    start = time.monotonic()
    i = 0
    while not stop and (a.count == 0 or i < a.count):
        part = i % a.partitions
        c = counters[part]
        taken = False
        while not taken:
            try:
                # Its report comes only from a later poll(), after sending().
                producer.produce(a.topic, value=contract.payload(a.run_id, part, c), partition=part,
                                 on_delivery=report(part, c))
                out.sending(part, c)
                taken = True
            except BufferError:  # the client's queue is full: serve reports, then try again
                if stop:  # never handed to the client: not sent
                    break
                producer.poll(0.1)
            except Exception as e:  # refused before it was queued
                out.sending(part, c)
                out.error(part, c, e)
                taken = True
        if not taken:
            break
        counters[part] += 1
        i += 1
        producer.poll(0)
        if interval:
            # Delivery reports are served while waiting for the next record.
            while not stop:
                delay = start + i * interval - time.monotonic()
                if delay <= 0:
                    break
                producer.poll(min(delay, 0.1))
    # Records under way still get their outcome, within kconform's stop
    # grace. A dead client never delivers them: purge, so each gets its
    # error report now.
    deadline = time.monotonic() + 20
    while len(producer) > 0 and time.monotonic() < deadline:
        if dead:
            producer.purge(in_queue=True, in_flight=True, blocking=False)
        producer.flush(0.5)
    if len(producer) > 0:
        print(f"confluent-kafka driver: {len(producer)} records still held at the stop", file=sys.stderr)
    out.done()
    # Destroying a client that still holds records can wait on them: leave.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
