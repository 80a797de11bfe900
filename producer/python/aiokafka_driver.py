#!/usr/bin/env python3
"""kconform's aiokafka driver: aiokafka's idempotent producer
(enable_idempotence=True, acks="all") behind kconform's driver contract
(contract.py). aiokafka batches records per partition itself; each record's
future gives its outcome."""
import asyncio
import logging
import signal
import sys

import aiokafka

import contract


async def main():
    a = contract.parse_args("aiokafka")
    conf = {"bootstrap_servers": a.brokers.split(","), "enable_idempotence": True, "acks": "all",
            "client_id": "kconform"}
    conf.update(contract.settings(a.set))
    producer = aiokafka.AIOKafkaProducer(**conf)
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


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s [%(name)s] %(message)s")
    asyncio.run(main())
