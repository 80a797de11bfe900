#!/usr/bin/env python3
"""kconform's kafka-python driver: kafka-python's idempotent producer
(enable_idempotence=True, acks="all") behind kconform's driver contract
(contract.py). kafka-python batches records per partition on its sender
thread; each record's future gives its outcome.

Given --transactional-id, it is kafka-python's transactional producer
(transactional_id), driven by contract.run_transactions."""
import logging
import os
import signal
import sys
import threading
import time

import kafka
import kafka.errors

import contract


def main():
    a = contract.parse_args("kafka-python")
    if a.transactional_id:
        transactional(a)
        return
    conf = contract.kwargs(a)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    producer = kafka.KafkaProducer(**conf)
    out = contract.Outcomes(a)
    print(f"kafka-python driver: kafka-python {kafka.__version__}, python {sys.version.split()[0]}", file=sys.stderr)
    contract.emit(name="startup_complete")

    counters = [0] * a.partitions
    interval = 1 / a.rate if a.rate > 0 else 0
    start = time.monotonic()
    i = 0
    while not stop.is_set() and (a.count == 0 or i < a.count):
        part = i % a.partitions
        c = counters[part]
        counters[part] += 1
        out.sending(part, c)
        try:
            # send blocks while the buffer is full (max_block_ms).
            fut = producer.send(a.topic, value=contract.payload(a.run_id, part, c), partition=part)
        except Exception as e:  # refused before it was queued
            out.error(part, c, e)
        else:
            fut.add_callback(lambda md, p=part, n=c: out.success(p, n, md.offset))
            fut.add_errback(lambda e, p=part, n=c: out.error(p, n, e))
        i += 1
        if interval:
            delay = start + i * interval - time.monotonic()
            if delay > 0:
                stop.wait(delay)
    # Records under way still get their outcome, within kconform's stop grace.
    try:
        producer.flush(timeout=20)
    except Exception as e:
        print(f"kafka-python driver: flush: {e!r}", file=sys.stderr)
    try:
        producer.close(timeout=5)
    except Exception as e:  # records still under way: they get no outcome
        print(f"kafka-python driver: close: {e!r}", file=sys.stderr)
    out.done()
    # A producer that did not close keeps its sender thread: leave anyway.
    sys.stdout.flush()
    os._exit(0)


class TxnClient(contract.TxnClient):
    """kafka-python's transactional producer: its sender thread serves
    the records' futures, and each transaction step blocks until the
    coordinator answered."""

    def __init__(self, producer, out, stop):
        self.p, self.out, self.stop = producer, out, stop

    def init(self):
        self.p.init_transactions()

    def begin(self):
        self.p.begin_transaction()

    def send(self, part, counter, txn):
        self.out.sending(part, counter, txn)
        try:
            # send blocks while the buffer is full (max_block_ms).
            fut = self.p.send(self.out.a.topic, value=contract.payload(self.out.a.run_id, part, counter), partition=part)
        except Exception as e:  # refused before it was queued
            self.out.error(part, counter, e)
        else:
            fut.add_callback(lambda md: self.out.success(part, counter, md.offset))
            fut.add_errback(lambda e: self.out.error(part, counter, e))
        return True

    def flush(self, seconds):
        try:
            self.p.flush(timeout=seconds)
        except kafka.errors.KafkaTimeoutError:
            pass  # records still under way: the caller decides

    def commit(self):
        self.p.commit_transaction()

    def abort(self):
        self.p.abort_transaction()

    def wait(self, seconds):
        self.stop.wait(seconds)

    def fatal(self, exc):
        # The transaction manager's own state says whether an abort can
        # follow (it has no public accessor); fencing is fatal in it.
        return (isinstance(exc, (kafka.errors.ProducerFencedError, kafka.errors.InvalidProducerEpochError))
                or self.p._transaction_manager.has_fatal_error())

    def close(self):
        self.p.close(timeout=5)


def transactional(a):
    """Runs the contract's transactions with transactional_id set."""
    conf = contract.kwargs(a)
    contract.transactional_main(
        a, f"kafka-python driver: kafka-python {kafka.__version__}, python {sys.version.split()[0]}, "
           f"transactional_id {a.transactional_id}",
        lambda out, stop: TxnClient(kafka.KafkaProducer(**conf), out, stop))


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s [%(name)s] %(message)s")
    main()
