#!/usr/bin/env python3
"""kconform's confluent-kafka-python driver: the idempotent producer of
confluent-kafka-python (enable.idempotence=true, acks=all), which is
librdkafka underneath, behind kconform's driver contract (contract.py).

A --set key=value is a librdkafka setting, passed through as the string
given: librdkafka parses its own values. librdkafka batches records per
partition on its own threads; delivery reports come back through poll(),
which this driver calls between records, and each names its record's
partition and offset.

Given --transactional-id, it is librdkafka's transactional producer
(transactional.id), driven by contract.run_transactions: a step that
fails with a retriable error is called again, as librdkafka asks; one
that is neither retriable nor abortable is fatal."""
import os
import signal
import sys
import time

import confluent_kafka

import contract


def main():
    a = contract.parse_args("confluent-kafka-python")
    if a.transactional_id:
        transactional(a)
        return
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

    def serve(call, seconds):
        # A fatal error comes out of the poll() or flush() that serves it
        # as an exception, not through error_cb (see TxnClient._serve): it
        # ends the client as there. Slices stay at 0.1 s for the reason
        # given there.
        nonlocal stop, dead
        try:
            call(min(seconds, SERVE_SLICE))
        except confluent_kafka.KafkaException as e:
            err = e.args[0] if e.args else None
            if not (isinstance(err, confluent_kafka.KafkaError) and err.fatal()):
                raise
            if not dead:
                contract.emit(name="producer_fatal", exception=err.name(), message=err.str())
            dead = stop = True

    # kconform:driver-settings begin (each listed with the library's reason in driver/own.go and docs/clients.md)
    conf = {"bootstrap.servers": a.brokers, "enable.idempotence": True, "acks": "all",
            "client.id": "kconform", "error_cb": on_error}
    # kconform:driver-settings end
    conf.update(contract.settings(a.set, typed=False))
    producer = confluent_kafka.Producer(conf)
    out = contract.Outcomes(a)
    print(f"confluent-kafka driver: confluent-kafka {confluent_kafka.__version__}, "
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
                serve(producer.poll, 0.1)
            except Exception as e:  # refused before it was queued
                out.sending(part, c)
                out.error(part, c, e)
                taken = True
        if not taken:
            break
        counters[part] += 1
        i += 1
        serve(producer.poll, 0)
        if interval:
            # Delivery reports are served while waiting for the next record.
            while not stop:
                delay = start + i * interval - time.monotonic()
                if delay <= 0:
                    break
                serve(producer.poll, delay)
    # Records under way still get their outcome, within kconform's stop
    # grace. A dead client never delivers them: purge, so each gets its
    # error report now.
    deadline = time.monotonic() + 20
    while len(producer) > 0 and time.monotonic() < deadline:
        if dead:
            producer.purge(in_queue=True, in_flight=True, blocking=False)
        serve(producer.flush, 0.5)
    if len(producer) > 0:
        print(f"confluent-kafka driver: {len(producer)} records still held at the stop", file=sys.stderr)
    out.done()
    # Destroying a client that still holds records can wait on them: leave.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# SERVE_SLICE bounds each poll() and flush() of the transactional driver
# (TxnClient._serve).
SERVE_SLICE = 0.1


class TxnClient(contract.TxnClient):
    """librdkafka's transactional producer. Delivery reports are served
    by poll() and flush() on this thread, between and after records."""

    def __init__(self, producer, out, stop, log):
        self.p, self.out, self.stop, self.log = producer, out, stop, log
        self.dead = False  # a fatal error came: nothing more is sent

    def _serve(self, call, seconds):
        # confluent-kafka-python raises a fatal error from the poll() or
        # flush() that serves it instead of calling error_cb, and leaves
        # it set in the interpreter (confluent_kafka.c error_cb, L2202 at
        # v2.15.0). A poll() or flush() of 200 ms or more goes on in
        # 200 ms chunks after that (Producer.c Producer_poll0 L363 and
        # Producer_flush L458), running delivery reports with the error
        # still set: they fail with SystemError anywhere, even leaving a
        # lock held. Shorter calls stop at the error, so every call here
        # is at most SERVE_SLICE. The transaction's next step fails with
        # the error and reports it.
        try:
            call(min(seconds, SERVE_SLICE))
        except confluent_kafka.KafkaException as e:
            if not e.args[0].fatal():
                raise
            self.log(f"fatal error: {e.args[0].name()}: {e.args[0].str()}")
            self.dead = True

    def _retrying(self, what, call):
        # librdkafka: a retriable error (a timeout among them) leaves the
        # step to be called again; any other error is the step's outcome.
        while True:
            try:
                return call()
            except confluent_kafka.KafkaException as e:
                err = e.args[0]
                if not err.retriable() or err.fatal() or err.txn_requires_abort():
                    raise
                self.log(f"{what}: {err.name()}: {err.str()}: retrying")

    def init(self):
        self._retrying("init_transactions", lambda: self.p.init_transactions(30))

    def begin(self):
        self.p.begin_transaction()

    def send(self, part, counter, txn):
        if self.dead:
            return False
        report = _report(self.out, part, counter)
        while True:
            try:
                # Its report comes only from a later poll(), after sending().
                self.p.produce(self.out.a.topic, value=contract.payload(self.out.a.run_id, part, counter),
                               partition=part, on_delivery=report)
                self.out.sending(part, counter, txn)
                break
            except BufferError:  # the client's queue is full: serve reports, then try again
                if self.stop.is_set() or self.dead:  # never handed to the client: not sent
                    return False
                self._serve(self.p.poll, 0.1)
            except Exception as e:  # refused before it was queued
                self.out.sending(part, counter, txn)
                self.out.error(part, counter, e)
                break
        self._serve(self.p.poll, 0)
        return True

    def flush(self, seconds):
        deadline = time.monotonic() + seconds
        while True:
            if self.dead:  # a dead client never delivers them: each gets its error now
                self.p.purge(in_queue=True, in_flight=True, blocking=False)
            self._serve(self.p.flush, seconds)
            if len(self.p) == 0 or time.monotonic() >= deadline:
                return

    def commit(self):
        self._retrying("commit_transaction", lambda: self.p.commit_transaction())

    def abort(self):
        self._retrying("abort_transaction", lambda: self.p.abort_transaction())

    def wait(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.stop.is_set():
            self._serve(self.p.poll, max(0.0, deadline - time.monotonic()))

    def fatal(self, exc):
        # commit_transaction's own doc: an error neither retriable nor
        # txn_requires_abort() is fatal.
        if not isinstance(exc, confluent_kafka.KafkaException):
            return False
        err = exc.args[0]
        return err.fatal() or not (err.retriable() or err.txn_requires_abort())

    def describe(self, exc):
        if isinstance(exc, confluent_kafka.KafkaException) and isinstance(exc.args[0], confluent_kafka.KafkaError):
            return exc.args[0].name(), exc.args[0].str()
        return super().describe(exc)

    def close(self):
        # Every transaction has ended: what is left are the reports of
        # an abort's purged records, or records of a dead client.
        self.flush(5)


def _report(out, part, counter):
    def done(err, msg):
        if err is not None:
            out.error(part, counter, err, exception=err.name(), message=err.str())
        else:
            out.success(part, counter, msg.offset())
    return done


def transactional(a):
    """Runs the contract's transactions with transactional.id set."""
    def log(line):
        print(f"confluent-kafka driver: {line}", file=sys.stderr, flush=True)

    def on_error(err):
        # Fatal errors do not come here but from poll() (TxnClient._serve).
        log(f"error: {err.name()}: {err.str()}")

    # kconform:driver-settings begin (each listed with the library's reason in driver/own.go and docs/clients.md)
    conf = {"bootstrap.servers": a.brokers, "enable.idempotence": True, "acks": "all",
            "client.id": "kconform", "error_cb": on_error, "transactional.id": a.transactional_id}
    # kconform:driver-settings end
    conf.update(contract.settings(a.set, typed=False))
    contract.transactional_main(
        a, f"confluent-kafka driver: confluent-kafka {confluent_kafka.__version__}, "
           f"librdkafka {confluent_kafka.libversion()[0]}, python {sys.version.split()[0]}, "
           f"transactional.id {a.transactional_id}",
        lambda out, stop: TxnClient(confluent_kafka.Producer(conf), out, stop, log))


if __name__ == "__main__":
    main()
