#!/usr/bin/env python3
"""kconform's aiokafka driver: aiokafka's idempotent producer
(enable_idempotence=True, acks="all") behind kconform's driver contract
(contract.py). aiokafka batches records per partition itself; each record's
future gives its outcome.

Given --transactional-id, it is aiokafka's transactional producer
(transactional_id), driven by contract.run_transactions: as that loop is
shared with the blocking clients, the producer runs on an asyncio loop of
its own thread, and each step is a coroutine run there to its end."""
import asyncio
import logging
import signal
import sys
import threading

import aiokafka
import aiokafka.errors

import contract


async def main(a):
    producer = aiokafka.AIOKafkaProducer(**contract.kwargs(a))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    out = contract.Outcomes(a)
    await producer.start()
    print(f"aiokafka driver: aiokafka {aiokafka.__version__}, python {sys.version.split()[0]}", file=sys.stderr)
    contract.emit(name="startup_complete")

    def report(part, counter):
        def done(fut):
            if fut.cancelled():
                out.error(part, counter, asyncio.CancelledError("cancelled"))
            elif fut.exception() is not None:
                out.error(part, counter, fut.exception())
            else:
                out.success(part, counter, fut.result().offset)
        return done

    pending = set()
    counters = [0] * a.partitions
    interval = 1 / a.rate if a.rate > 0 else 0
    start = loop.time()
    i = 0
    while not stop.is_set() and (a.count == 0 or i < a.count):
        part = i % a.partitions
        c = counters[part]
        counters[part] += 1
        try:
            # send waits while aiokafka's buffer is full, and returns the
            # record's future once it is queued.
            fut = await producer.send(a.topic, value=contract.payload(a.run_id, part, c), partition=part)
        except Exception as e:  # refused before it was queued
            out.sending(part, c)
            out.error(part, c, e)
        else:
            out.sending(part, c)
            pending.add(fut)
            fut.add_done_callback(report(part, c))
            fut.add_done_callback(pending.discard)
        i += 1
        if interval:
            delay = start + i * interval - loop.time()
            if delay > 0:
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                except asyncio.TimeoutError:
                    pass
        elif i % 100 == 0:
            await asyncio.sleep(0)
    # Records under way still get their outcome, within kconform's stop grace.
    if pending:
        await asyncio.wait(set(pending), timeout=20)
    try:
        await asyncio.wait_for(producer.stop(), 5)
    except Exception as e:
        print(f"aiokafka driver: stop: {e!r}", file=sys.stderr)
    await asyncio.sleep(0)
    out.done()


class TxnClient(contract.TxnClient):
    """aiokafka's transactional producer on an asyncio loop in a thread of
    its own, where the records' futures are served; each step blocks on
    its coroutine there."""

    def __init__(self, conf, out, stop):
        self.out, self.stop = out, stop
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="aiokafka", daemon=True).start()
        self.p = self._run(self._producer(conf))

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    @staticmethod
    async def _producer(conf):
        # Made on its loop, which it keeps.
        return aiokafka.AIOKafkaProducer(**conf)

    def init(self):
        # start() bootstraps and waits for the producer id (InitProducerId).
        self._run(self.p.start())

    def _dead(self):
        # aiokafka asserts its state transitions, so a step after its
        # sender died (a fatal error: fenced, among others) would fail
        # with an AssertionError: raise the sender's own error instead.
        task = self.p._sender.sender_task
        if self.p._txn_manager.is_fatal_error() and task is not None and task.done() and not task.cancelled():
            if task.exception() is not None:
                raise task.exception()

    async def _begin(self):
        self._dead()
        await self.p.begin_transaction()

    async def _commit(self):
        self._dead()
        await self.p.commit_transaction()

    async def _abort(self):
        self._dead()
        await self.p.abort_transaction()

    def begin(self):
        self._run(self._begin())

    def send(self, part, counter, txn):
        self._run(self._send(part, counter, txn))
        return True

    async def _send(self, part, counter, txn):
        try:
            # send waits while aiokafka's buffer is full, and returns the
            # record's future once it is queued.
            fut = await self.p.send(self.out.a.topic, value=contract.payload(self.out.a.run_id, part, counter),
                                    partition=part)
        except Exception as e:  # refused before it was queued
            self.out.sending(part, counter, txn)
            self.out.error(part, counter, e)
        else:
            self.out.sending(part, counter, txn)
            fut.add_done_callback(_report(self.out, part, counter))

    def flush(self, seconds):
        self._run(self._flush(seconds))

    async def _flush(self, seconds):
        # The timeout is caught here, on the loop: run_coroutine_threadsafe
        # turns it into concurrent.futures.TimeoutError before Python 3.11.
        try:
            await asyncio.wait_for(self.p.flush(), seconds)
        except asyncio.TimeoutError:
            pass  # records still under way: the caller decides

    def commit(self):
        self._run(self._commit())

    def abort(self):
        self._run(self._abort())

    def wait(self, seconds):
        self.stop.wait(seconds)

    def fatal(self, exc):
        # The transaction manager's own state says whether an abort can
        # follow (it has no public accessor): a failed sender (fenced,
        # among others) leaves it in FATAL_ERROR.
        return isinstance(exc, aiokafka.errors.ProducerFenced) or self.p._txn_manager.is_fatal_error()

    def close(self):
        self._run(asyncio.wait_for(self.p.stop(), 5))


def _report(out, part, counter):
    def done(fut):
        if fut.cancelled():
            out.error(part, counter, asyncio.CancelledError("cancelled"))
        elif fut.exception() is not None:
            out.error(part, counter, fut.exception())
        else:
            out.success(part, counter, fut.result().offset)
    return done


def transactional(a):
    """Runs the contract's transactions with transactional_id set."""
    conf = contract.kwargs(a)
    contract.transactional_main(
        a, f"aiokafka driver: aiokafka {aiokafka.__version__}, python {sys.version.split()[0]}, "
           f"transactional_id {a.transactional_id}",
        lambda out, stop: TxnClient(conf, out, stop))


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s [%(name)s] %(message)s")
    args = contract.parse_args("aiokafka")
    if args.transactional_id:
        transactional(args)
    else:
        asyncio.run(main(args))
