"""The driver contract shared by kconform's Python drivers (docs/clients.md).

Settings come from flags or KCONFORM_* environment variables, one JSON event
goes per line on stdout, the client's own logs go to stderr, and SIGTERM
stops the driver cleanly. A --set key=value is a keyword argument of the
client's producer in the client's own spelling; numbers and true/false are
read as such (or kept as given, for a client that parses its own, such as
librdkafka).
"""
import argparse
import json
import os
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
    a = p.parse_args()
    if not a.brokers or not a.topic or not a.run_id or a.partitions < 1:
        p.error("need --brokers, --topic, --run-id and --partitions >= 1")
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


def emit(**e):
    line = json.dumps({"timestamp": int(time.time() * 1000), **e})
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def payload(run_id, part, counter):
    return f"{PAYLOAD_PREFIX}{run_id}:{part}:{counter}".encode()


class Outcomes:
    """Prints each record's outcome and counts the acknowledged ones."""

    def __init__(self, a):
        self.a, self.acked, self.sent = a, 0, 0
        self._lock = threading.Lock()
        self._pending = set()  # records handed to the client, no outcome yet

    def sending(self, part, counter):
        """Counts a record handed to the client; it is pending until its outcome."""
        with self._lock:
            self.sent += 1
            self._pending.add((part, counter))

    def success(self, part, counter, offset):
        with self._lock:
            self.acked += 1
            self._pending.discard((part, counter))
        emit(name="producer_send_success", topic=self.a.topic, partition=part, offset=offset,
             counter=counter, run_id=self.a.run_id, value=payload(self.a.run_id, part, counter).decode())

    def error(self, part, counter, exc, exception=None, message=None):
        """Prints a failed record: exception and message default to exc's
        type name and text (a client with error codes names them instead)."""
        with self._lock:
            self._pending.discard((part, counter))
        emit(name="producer_send_error", topic=self.a.topic, partition=part, counter=counter,
             run_id=self.a.run_id, value=payload(self.a.run_id, part, counter).decode(),
             exception=exception or type(exc).__name__, message=str(exc) if message is None else message)

    def done(self):
        # Records the client still holds without an outcome are reported
        # as such: the verifier accounts for them as unresolved, not lost.
        with self._lock:
            pending = sorted(self._pending)
        for part, counter in pending:
            emit(name="producer_send_pending", topic=self.a.topic, partition=part, counter=counter,
                 run_id=self.a.run_id, value=payload(self.a.run_id, part, counter).decode())
        emit(name="tool_data", sent=self.sent, acked=self.acked)
        emit(name="shutdown_complete")
