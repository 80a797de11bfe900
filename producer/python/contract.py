"""The driver contract shared by kconform's Python drivers (docs/clients.md).

Settings come from flags or KCONFORM_* environment variables, one JSON event
goes per line on stdout, the client's own logs go to stderr, and SIGTERM
stops the driver cleanly. A --set key=value is a keyword argument of the
client's producer in the client's own spelling; numbers and true/false are
read as such (or kept as given, for a client that parses its own, such as
librdkafka).

Given --transactional-id, the driver runs the contract's transactions
instead: transactional_main runs them to the driver's end with
run_transactions, their loop, shared by the three drivers, each of which
hands it its client behind a TxnClient.
"""
import argparse
import json
import os
import signal
import sys
import threading
import time

PAYLOAD_PREFIX = "kc:"
_out_lock = threading.Lock()


def parse_args(client):
    env = os.environ.get
    p = argparse.ArgumentParser(prog=client, description=f"kconform's {client} driver")
    p.add_argument("--brokers", default=env("KCONFORM_BROKERS", ""))
    p.add_argument("--topic", default=env("KCONFORM_TOPIC", ""))
    p.add_argument("--partitions", type=int, default=int(env("KCONFORM_PARTITIONS", "1")))
    p.add_argument("--count", type=int, default=int(env("KCONFORM_COUNT", "0")))
    p.add_argument("--rate", type=float, default=float(env("KCONFORM_RATE", "0")))
    p.add_argument("--run-id", default=env("KCONFORM_RUN_ID", ""))
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    # Only a transactional run passes these (docs/clients.md, point 4).
    p.add_argument("--transactional-id", default="")
    p.add_argument("--transaction-size", type=int, default=10)
    p.add_argument("--abort-every", type=int, default=0)
    a = p.parse_args()
    if not a.brokers or not a.topic or not a.run_id or a.partitions < 1:
        p.error("need --brokers, --topic, --run-id and --partitions >= 1")
    if a.transaction_size < 1 or a.abort_every < 0:
        p.error("need --transaction-size >= 1 and --abort-every >= 0")
    return a


def value(v):
    """Reads a --set value as the type it spells."""
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    return v


def settings(pairs, typed=True):
    """Reads --set pairs; typed=False keeps each value as the string given."""
    out = {}
    for kv in pairs:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            raise SystemExit(f"--set {kv}: want key=value")
        out[k] = value(v) if typed else v
    return out


_closed = False  # set by the last event: nothing may follow shutdown_complete


def emit(**e):
    global _closed
    line = json.dumps({"timestamp": int(time.time() * 1000), **e})
    with _out_lock:
        if _closed:
            return
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        _closed = e.get("name") == "shutdown_complete"


def kwargs(a):
    """The producer's keyword arguments for the pure Python clients
    (aiokafka, kafka-python), which spell them alike: idempotent with
    acks="all", transactional_id in a transactional run, then --set's."""
    # kconform:driver-settings begin (each listed with the library's reason in driver/own.go and docs/clients.md)
    conf = {"bootstrap_servers": a.brokers.split(","), "enable_idempotence": True, "acks": "all",
            "client_id": "kconform"}
    # kconform:driver-settings end
    if a.transactional_id:
        conf["transactional_id"] = a.transactional_id
    conf.update(settings(a.set))
    return conf


def payload(run_id, part, counter):
    return f"{PAYLOAD_PREFIX}{run_id}:{part}:{counter}".encode()


class Outcomes:
    """Prints each record's outcome and counts the acknowledged ones. A
    record sent in a transaction carries its number (txn) in its events."""

    def __init__(self, a):
        self.a, self.acked, self.sent = a, 0, 0
        self._lock = threading.Lock()
        # Records handed to the client without an outcome yet, each with
        # its transaction (None outside transactions).
        self._pending = {}
        self._failed_txns = set()  # transactions with a failed record
        self._done = False

    def sending(self, part, counter, txn=None):
        """Counts a record handed to the client; it is pending until its outcome."""
        with self._lock:
            self.sent += 1
            self._pending[(part, counter)] = txn

    def _settle(self, part, counter):
        """Forgets a pending record and returns the txn field of its events."""
        with self._lock:
            txn = self._pending.pop((part, counter), None)
        return {} if txn is None else {"txn": txn}

    def success(self, part, counter, offset):
        with self._lock:
            self.acked += 1
        emit(name="producer_send_success", topic=self.a.topic, partition=part, offset=offset,
             counter=counter, run_id=self.a.run_id, value=payload(self.a.run_id, part, counter).decode(),
             **self._settle(part, counter))

    def error(self, part, counter, exc, exception=None, message=None):
        """Prints a failed record: exception and message default to exc's
        type name and text (a client with error codes names them instead)."""
        txn = self._settle(part, counter)
        if txn:
            with self._lock:
                self._failed_txns.add(txn["txn"])
        emit(name="producer_send_error", topic=self.a.topic, partition=part, counter=counter,
             run_id=self.a.run_id, value=payload(self.a.run_id, part, counter).decode(),
             exception=exception or type(exc).__name__, message=str(exc) if message is None else message,
             **txn)

    def pending(self, txn):
        """Counts transaction txn's records still without an outcome."""
        with self._lock:
            return sum(1 for t in self._pending.values() if t == txn)

    def failed(self, txn):
        """Tells whether a record of transaction txn failed."""
        with self._lock:
            return txn in self._failed_txns

    def done(self):
        # Records the client still holds without an outcome are reported
        # as such: the verifier accounts for them as unresolved, not lost.
        # Once only: Stop's deadline may call it while the driver does.
        with self._lock:
            if self._done:
                return
            self._done = True
            pending = sorted(self._pending.items())
        for (part, counter), txn in pending:
            emit(name="producer_send_pending", topic=self.a.topic, partition=part, counter=counter,
                 run_id=self.a.run_id, value=payload(self.a.run_id, part, counter).decode(),
                 **({} if txn is None else {"txn": txn}))
        emit(name="tool_data", sent=self.sent, acked=self.acked)
        emit(name="shutdown_complete")


# After SIGTERM, records under way get FLUSH_GRACE seconds for their
# outcomes before their transaction is aborted instead; at EXIT_GRACE the
# driver reports what it holds and exits even if a step is still blocked
# in its client, inside kconform's 30 s stop grace (a step left without
# its outcome leaves its transaction's outcome unknown, which it is).
FLUSH_GRACE = 15
EXIT_GRACE = 25


class Stop:
    """SIGTERM and SIGINT for a transactional driver: they stop it after
    the transaction under way, and EXIT_GRACE later, at the latest, end it
    with out's last events."""

    def __init__(self, out):
        self._out, self._event, self._at = out, threading.Event(), None
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)

    def _on_signal(self, *_):
        if self._at is None:
            self._at = time.monotonic()
            t = threading.Timer(EXIT_GRACE, self._exit)
            t.daemon = True
            t.start()
        self._event.set()

    def _exit(self):
        print(f"driver: still not done {EXIT_GRACE} s after the stop: leaving", file=sys.stderr, flush=True)
        self._out.done()
        sys.stdout.flush()
        os._exit(0)

    def is_set(self):
        return self._event.is_set()

    def wait(self, seconds):
        """Sleeps for seconds, or until the stop; True once stopped."""
        return self._event.wait(seconds)

    def past(self, seconds):
        """Tells whether the stop came at least seconds ago."""
        return self._at is not None and time.monotonic() - self._at >= seconds


class TxnClient:
    """A client's transactional producer as run_transactions drives it.
    Each step blocks until it is done and raises the client's error when
    it failed."""

    def init(self):
        """Readies transactions (InitProducerId), before the first begin."""

    def begin(self):
        raise NotImplementedError

    def send(self, part, counter, txn):
        """Hands the record to the client, telling Outcomes it is sending
        (and failed, if the client refused it); returns False, having sent
        nothing, when it could not be handed over before the stop or the
        client's death: the transaction takes no more records."""
        raise NotImplementedError

    def flush(self, seconds):
        """Waits up to seconds for records under way, serving their outcomes."""
        raise NotImplementedError

    def commit(self):
        raise NotImplementedError

    def abort(self):
        raise NotImplementedError

    def wait(self, seconds):
        """Waits up to seconds for the next record, serving outcomes meanwhile."""
        raise NotImplementedError

    def fatal(self, exc):
        """Tells whether exc leaves nothing to abort: the producer was
        fenced (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH) or is otherwise
        dead."""
        return False

    def describe(self, exc):
        """Returns the exception and message fields that report exc, with
        the error it was raised from, if any."""
        message = str(exc)
        if exc.__cause__ is not None:
            message += f" (from {type(exc.__cause__).__name__}: {exc.__cause__})"
        return type(exc).__name__, message

    def close(self):
        """Serves the outcomes still due (an abort's failed records) for a
        few seconds at most and lets the client go."""


def run_transactions(a, out, client, stop):
    """Produces the workload in transactions, as docs/clients.md's
    contract has it: transaction k begins, sends the next
    --transaction-size records round-robin (counters go on across
    transactions), flushes them, then aborts if it is an --abort-every-th
    one or a record of it failed (it cannot commit), else commits; a
    failed commit is followed by an abort. Each step is printed with its
    outcome and txn. A step that fails otherwise, or a commit that fails
    fatally (fenced), ends the run after producer_fatal, as an
    application must. After the stop the transaction under way takes no
    more records and ends as due."""
    tid = a.transactional_id

    def step(name, txn, exc=None):
        e = {"name": name, "txn": txn, "transactional_id": tid}
        if exc is not None:
            e["exception"], e["message"] = client.describe(exc)
        emit(**e)

    def fatal(txn, what, exc):
        name, message = client.describe(exc)
        if not message.startswith(name):
            message = f"{name}: {message}"
        emit(name="producer_fatal", txn=txn,
             message=f"transaction {txn}: {what}: {message}; stopping, as the producer cannot go on")

    counters = [0] * a.partitions
    interval = 1 / a.rate if a.rate > 0 else 0
    start = time.monotonic()
    i = txn = 0
    while not stop.is_set() and (a.count == 0 or i < a.count):
        try:
            if txn == 0:
                client.init()
            client.begin()
        except Exception as e:
            step("transaction_begin", txn, e)
            fatal(txn, "begin failed", e)
            return
        step("transaction_begin", txn)
        for _ in range(a.transaction_size):
            if a.count and i >= a.count:
                break
            while interval and not stop.is_set():
                delay = start + i * interval - time.monotonic()
                if delay <= 0:
                    break
                client.wait(min(delay, 0.1))
            if stop.is_set():
                break
            part = i % a.partitions
            if not client.send(part, counters[part], txn):
                break
            counters[part] += 1
            i += 1
        # A transaction ends once its records are written or failed;
        # after the stop, those still under way at FLUSH_GRACE make it
        # abort (the client fails them).
        while out.pending(txn) and not stop.past(FLUSH_GRACE):
            client.flush(0.5)
        due = not (a.abort_every > 0 and (txn + 1) % a.abort_every == 0)
        if due and not out.failed(txn) and not out.pending(txn):
            try:
                client.commit()
            except Exception as e:
                step("transaction_commit", txn, e)
                if client.fatal(e):
                    fatal(txn, "commit failed", e)
                    return
            else:
                step("transaction_commit", txn)
                txn += 1
                continue
        try:
            client.abort()
        except Exception as e:
            step("transaction_abort", txn, e)
            # A stopped driver's abort that fails short of a fence ran out
            # of the stop's grace, not the client: nothing fatal to report,
            # and its records are told as still pending.
            if client.fatal(e) or not stop.is_set():
                fatal(txn, "abort failed", e)
            return
        step("transaction_abort", txn)
        txn += 1


def transactional_main(a, banner, new_client):
    """Runs a transactional driver to its end: new_client(out, stop) makes
    its TxnClient, banner (the client's versions) goes to stderr, then
    startup_complete, the transactions, the client's close, the records
    still without an outcome, tool_data and shutdown_complete. It leaves
    with os._exit, as the client may still hold a thread or records
    (kafka-python's sender thread, aiokafka's loop, librdkafka waiting on
    records when destroyed)."""
    out = Outcomes(a)
    stop = Stop(out)
    client = new_client(out, stop)
    print(banner, file=sys.stderr, flush=True)
    emit(name="startup_complete")
    try:
        run_transactions(a, out, client, stop)
    finally:
        try:
            client.close()
        except Exception as e:
            print(f"driver: close: {e!r}", file=sys.stderr, flush=True)
        out.done()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
