// TxnProducer is kconform's transactional java driver: the Java client's
// transactional producer behind the driver contract of docs/clients.md
// (point 4, "Transactions"). driver.sh runs it for a run given
// --transactional-id; idempotent runs go through Kafka's own
// VerifiableProducer instead. kconform compiles it on first use against
// each kafka-clients version it ships, so it uses only the API that
// kafka-clients 2.8.2 already has.
//
// Transaction k (from 0) begins, sends the next --transaction-size records
// round-robin over the partitions (each partition's counter goes on across
// transactions), flushes them, then aborts when --abort-every n > 0 and
// (k+1) % n == 0, else commits. A transaction with a failed record aborts
// instead; a failed commit is reported, then aborted. A fatal error (the
// producer fenced, its sequence lost, not authorized, a broker too old)
// is reported with the step it broke, then producer_fatal, and the driver
// stops, as an application must. Events go one JSON object a line on
// stdout; the client's logs go to stderr.
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.StringSerializer;

public final class TxnProducer {
    // After SIGTERM the transaction under way ends as due; should the
    // client still hang FORCE_AFTER later, the hook closes it at once
    // (what it holds fails), and FINISH_AFTER later it prints the last
    // lines whatever the main thread does: all within kconform's 30 s.
    private static final long FORCE_AFTER_MS = 20_000;
    private static final long FINISH_AFTER_MS = 5_000;

    // Events go to the process's real stdout. System.out is pointed at
    // stderr, so that a logging backend's console output (log4j 2's
    // default configuration writes to System.out) stays out of them.
    private static final PrintStream EVENTS =
            new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);

    private final Flags flags;
    private final Object out = new Object();
    private boolean finished; // guarded by out: shutdown_complete was printed
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong acked = new AtomicLong();
    // Records handed to the client without an outcome yet, by value.
    private final Map<String, Rec> pending = new ConcurrentHashMap<>();
    private volatile boolean stopping;
    private volatile boolean forceClosed;
    private volatile long stopAtNanos;
    private KafkaProducer<String, String> producer;

    private TxnProducer(Flags flags) {
        this.flags = flags;
    }

    public static void main(String[] argv) {
        Flags f;
        try {
            f = Flags.parse(argv);
        } catch (IllegalArgumentException e) {
            System.err.println("java txn driver: " + e.getMessage());
            System.exit(2);
            return;
        }
        System.setOut(System.err);
        new TxnProducer(f).run();
    }

    private void run() {
        Properties props = new Properties();
        // kconform:driver-settings begin (each listed with the library's reason in driver/own.go and docs/clients.md)
        props.put("bootstrap.servers", flags.brokers);
        props.put("enable.idempotence", "true");
        props.put("acks", "all");
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        // kconform:driver-settings end
        props.putAll(flags.settings);
        props.put("transactional.id", flags.transactionalId);
        System.err.println("java txn driver: kafka-clients " + clientVersion() + ", java "
                + System.getProperty("java.version") + ", transactional.id " + flags.transactionalId);
        try {
            producer = new KafkaProducer<>(props);
        } catch (RuntimeException e) {
            // A setting the client refuses: the run cannot start, and its
            // last log line says why.
            emit(obj("producer_fatal").str("message", "start the producer: " + describe(e)));
            EVENTS.flush();
            System.err.println("java txn driver: start the producer: " + describe(e));
            System.exit(1);
            return;
        }
        Thread main = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(main), "kconform-stop"));
        emit(obj("startup_complete"));
        if (initTransactions()) {
            produce();
        }
        try {
            producer.close(Duration.ofSeconds(5));
        } catch (RuntimeException e) {
            System.err.println("java txn driver: close: " + describe(e));
        }
        finish();
    }

    // stop runs on SIGTERM (and at a normal exit, when the main thread is
    // done already): the main thread ends the transaction under way and
    // prints the last lines; a client that hangs is closed, then the last
    // lines are printed here.
    private void stop(Thread main) {
        stopAtNanos = System.nanoTime();
        stopping = true;
        try {
            main.join(FORCE_AFTER_MS);
            if (main.isAlive()) {
                System.err.println("java txn driver: the client still holds the transaction "
                        + FORCE_AFTER_MS / 1000 + " s after the stop: closing it now");
                forceClosed = true;
                producer.close(Duration.ZERO);
                main.join(FINISH_AFTER_MS);
            }
        } catch (InterruptedException | RuntimeException e) {
            System.err.println("java txn driver: stop: " + describe(e));
        }
        finish();
    }

    // initTransactions registers the transactional id with its coordinator,
    // trying again after a timeout (a broker not up yet), as the client
    // allows; false when the producer cannot go on.
    private boolean initTransactions() {
        while (!stopping) {
            try {
                producer.initTransactions();
                return true;
            } catch (TimeoutException e) {
                System.err.println("java txn driver: initTransactions: " + describe(e) + "; trying again");
            } catch (RuntimeException e) {
                fatal(null, "initTransactions failed", e);
                return false;
            }
        }
        return false;
    }

    // produce runs the transactions until --count records or the stop.
    private void produce() {
        long[] counters = new long[flags.partitions];
        long i = 0;
        long start = System.nanoTime();
        boolean beginFailedBefore = false;
        for (long txn = 0; (flags.count == 0 || i < flags.count) && !stopping; txn++) {
            try {
                producer.beginTransaction();
                step("transaction_begin", txn, null);
                beginFailedBefore = false;
            } catch (RuntimeException e) {
                step("transaction_begin", txn, e);
                if (isFatal(e) || beginFailedBefore) {
                    fatal(txn, "begin failed", e);
                    return;
                }
                // A client left in an abortable error takes an abort
                // before it begins again; twice in a row is for good.
                beginFailedBefore = true;
                if (!end(txn, false)) {
                    return;
                }
                continue;
            }
            AtomicInteger failed = new AtomicInteger();
            for (int k = 0; k < flags.transactionSize && (flags.count == 0 || i < flags.count); k++) {
                // A failed record dooms the transaction: it ends now,
                // and its remaining records are not sent.
                if (failed.get() > 0 || !due(start, i)) {
                    break;
                }
                int p = (int) (i % flags.partitions);
                send(p, counters[p], txn, failed);
                counters[p]++;
                i++;
            }
            // Every record's outcome before the end: flush sends what is
            // buffered at once (linger.ms aside) and waits for it.
            RuntimeException flushErr = null;
            try {
                producer.flush();
            } catch (RuntimeException e) {
                flushErr = e;
                System.err.println("java txn driver: transaction " + txn + ": flush: " + describe(e));
            }
            boolean due = !(flags.abortEvery > 0 && (txn + 1) % flags.abortEvery == 0);
            if (!end(txn, due && failed.get() == 0 && flushErr == null)) {
                return;
            }
        }
    }

    // end commits transaction txn or aborts it, reporting each step; a
    // commit that fails is followed by an abort unless the error is
    // fatal. False when the transaction could not be ended: the producer
    // stops.
    private boolean end(long txn, boolean commit) {
        if (commit) {
            try {
                producer.commitTransaction();
                step("transaction_commit", txn, null);
                return true;
            } catch (RuntimeException e) {
                step("transaction_commit", txn, e);
                if (isFatal(e)) {
                    fatal(txn, "commit failed", e);
                    return false;
                }
            }
        }
        try {
            producer.abortTransaction();
            step("transaction_abort", txn, null);
            return true;
        } catch (RuntimeException e) {
            step("transaction_abort", txn, e);
            fatal(txn, "could not end it", e);
            return false;
        }
    }

    // due waits until record i falls due at --rate; false once stopped.
    private boolean due(long start, long i) {
        if (flags.rate > 0) {
            long at = start + (long) (i / flags.rate * 1e9);
            for (long wait; !stopping && (wait = at - System.nanoTime()) > 0; ) {
                try {
                    Thread.sleep(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(wait), 50)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return !stopping;
    }

    // send hands record counter of partition p to the client in
    // transaction txn; its outcome is printed once known.
    private void send(int p, long counter, long txn, AtomicInteger failed) {
        Rec r = new Rec(p, counter, txn, flags.runId);
        pending.put(r.value, r);
        sent.incrementAndGet();
        Callback cb = (md, e) -> outcome(r, md, e, failed);
        try {
            producer.send(new ProducerRecord<>(flags.topic, p, r.key, r.value), cb);
        } catch (RuntimeException e) {
            // Refused before it was queued (the client in an error state,
            // metadata not there within max.block.ms): its outcome is this.
            outcome(r, null, e, failed);
        }
    }

    private void outcome(Rec r, RecordMetadata md, Exception e, AtomicInteger failed) {
        if (pending.remove(r.value) == null) {
            return; // an outcome was printed already
        }
        Json j = obj(e == null ? "producer_send_success" : "producer_send_error")
                .str("topic", flags.topic).num("partition", r.partition);
        if (e == null) {
            acked.incrementAndGet();
            j.num("offset", md.offset());
        } else {
            failed.incrementAndGet();
        }
        j.str("key", r.key).str("value", r.value).num("counter", r.counter)
                .str("run_id", flags.runId).num("txn", r.txn);
        if (e != null) {
            j.str("exception", e.getClass().getName()).str("message", describe(e));
        }
        emit(j);
    }

    private void step(String name, long txn, Throwable e) {
        Json j = obj(name).num("txn", txn).str("transactional_id", flags.transactionalId).str("run_id", flags.runId);
        if (e != null) {
            j.str("exception", e.getClass().getName()).str("message", describe(e));
            System.err.println("java txn driver: transaction " + txn + ": " + name + " failed: " + describe(e));
        }
        emit(j);
    }

    // fatal says the producer gives up for good (txn null: before any
    // transaction). A client closed by the stop's deadline is not a fatal
    // error of its own: that is only logged.
    private void fatal(Long txn, String what, Throwable e) {
        String msg = (txn == null ? "" : "transaction " + txn + ": ") + what + ": " + describe(e)
                + "; stopping, as the transactional id is no longer this producer's to use";
        System.err.println("java txn driver: " + msg);
        if (forceClosed) {
            return;
        }
        Json j = obj("producer_fatal").str("exception", e.getClass().getName()).str("message", msg);
        if (txn != null) {
            j.num("txn", txn);
        }
        j.str("run_id", flags.runId);
        emit(j);
    }

    // finish prints the last lines once: records still without an outcome,
    // the totals, and shutdown_complete. Nothing is printed after them.
    private void finish() {
        synchronized (out) {
            if (finished) {
                return;
            }
            List<Rec> held = new ArrayList<>(pending.values());
            held.sort((a, b) -> a.partition != b.partition ? Integer.compare(a.partition, b.partition)
                    : Long.compare(a.counter, b.counter));
            for (Rec r : held) {
                emit(obj("producer_send_pending").str("topic", flags.topic).num("partition", r.partition)
                        .num("counter", r.counter).str("value", r.value).str("run_id", flags.runId).num("txn", r.txn));
            }
            emit(obj("tool_data").num("sent", sent.get()).num("acked", acked.get()));
            emit(obj("shutdown_complete"));
            finished = true;
            long since = stopAtNanos == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopAtNanos);
            if (stopping && since > 0) {
                System.err.println("java txn driver: shut down " + since + " ms after the stop");
            }
        }
    }

    private void emit(Json j) {
        synchronized (out) {
            if (finished) {
                System.err.println("java txn driver: after shutdown_complete, not printed: " + j);
                return;
            }
            EVENTS.println(j);
            EVENTS.flush();
        }
    }

    private static Json obj(String name) {
        return new Json().str("name", name).num("timestamp", System.currentTimeMillis());
    }

    // isFatal tells whether e (or what caused it) is an error the
    // transactional producer cannot go on from. InvalidProducerEpochException
    // is matched by name: its class and its place in the client's
    // hierarchy changed across versions.
    static boolean isFatal(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof ProducerFencedException || c instanceof OutOfOrderSequenceException
                    || c instanceof AuthorizationException || c instanceof UnsupportedVersionException
                    || c.getClass().getSimpleName().equals("InvalidProducerEpochException")) {
                return true;
            }
        }
        return false;
    }

    // describe is e's message with its causes', which name the error a
    // wrapping KafkaException stands for ("... in an error state").
    static String describe(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            String m = c.getMessage();
            if (c != e) {
                b.append("; caused by ").append(c.getClass().getName()).append(m == null ? "" : ": ");
            }
            if (m != null) {
                b.append(m);
            } else if (c == e) {
                b.append(c.getClass().getName());
            }
        }
        return b.toString();
    }

    private static String clientVersion() {
        try (InputStream in = KafkaProducer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "unknown");
        } catch (Exception e) {
            return "unknown";
        }
    }

    // Rec is one record: its partition, counter, transaction, and the key
    // and value it is sent with.
    private static final class Rec {
        final int partition;
        final long counter;
        final long txn;
        final String key;
        final String value;

        Rec(int partition, long counter, long txn, String runId) {
            this.partition = partition;
            this.counter = counter;
            this.txn = txn;
            this.key = partition + "-" + counter;
            this.value = "kc:" + runId + ":" + partition + ":" + counter;
        }
    }

    // Json writes one flat JSON object, without a JSON library: kconform's
    // events hold only strings and numbers.
    static final class Json {
        private final StringBuilder b = new StringBuilder("{");

        Json str(String key, String value) {
            field(key);
            quote(value == null ? "" : value);
            return this;
        }

        Json num(String key, long value) {
            field(key);
            b.append(value);
            return this;
        }

        private void field(String key) {
            if (b.length() > 1) {
                b.append(',');
            }
            quote(key);
            b.append(':');
        }

        private void quote(String s) {
            b.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"': b.append("\\\""); break;
                    case '\\': b.append("\\\\"); break;
                    case '\n': b.append("\\n"); break;
                    case '\r': b.append("\\r"); break;
                    case '\t': b.append("\\t"); break;
                    default:
                        // Control characters, and the line separators that
                        // some readers take for line ends, are escaped.
                        if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                            b.append(String.format("\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                }
            }
            b.append('"');
        }

        @Override
        public String toString() {
            return b + "}";
        }
    }

    // Flags are the driver contract's flags; brokers, topic, partitions and
    // run id may come from KCONFORM_* instead.
    static final class Flags {
        String brokers = env("KCONFORM_BROKERS", "");
        String topic = env("KCONFORM_TOPIC", "");
        int partitions;
        long count;
        double rate;
        String runId = env("KCONFORM_RUN_ID", "");
        final Map<String, String> settings = new LinkedHashMap<>();
        String transactionalId = "";
        int transactionSize = 10;
        int abortEvery;

        static Flags parse(String[] argv) {
            Flags f = new Flags();
            try {
                f.partitions = Integer.parseInt(env("KCONFORM_PARTITIONS", "1"));
                for (int i = 0; i < argv.length; i += 2) {
                    String flag = argv[i];
                    if (i + 1 >= argv.length) {
                        throw new IllegalArgumentException(flag + " needs a value");
                    }
                    String v = argv[i + 1];
                    switch (flag) {
                        case "--brokers": f.brokers = v; break;
                        case "--topic": f.topic = v; break;
                        case "--partitions": f.partitions = Integer.parseInt(v); break;
                        case "--count": f.count = Long.parseLong(v); break;
                        case "--rate": f.rate = Double.parseDouble(v); break;
                        case "--run-id": f.runId = v; break;
                        case "--transactional-id": f.transactionalId = v; break;
                        case "--transaction-size": f.transactionSize = Integer.parseInt(v); break;
                        case "--abort-every": f.abortEvery = Integer.parseInt(v); break;
                        case "--set": {
                            int eq = v.indexOf('=');
                            if (eq <= 0) {
                                throw new IllegalArgumentException("--set " + v + ": want key=value");
                            }
                            f.settings.put(v.substring(0, eq), v.substring(eq + 1));
                            break;
                        }
                        default: throw new IllegalArgumentException("unknown flag " + flag);
                    }
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("a number is wanted: " + e.getMessage());
            }
            if (f.brokers.isEmpty() || f.topic.isEmpty() || f.runId.isEmpty() || f.transactionalId.isEmpty()
                    || f.partitions < 1 || f.transactionSize < 1 || f.count < 0 || f.rate < 0 || f.abortEvery < 0) {
                throw new IllegalArgumentException("need --brokers, --topic, --run-id, --transactional-id, "
                        + "--partitions >= 1 and --transaction-size >= 1 (count, rate and abort-every >= 0)");
            }
            return f;
        }

        private static String env(String name, String def) {
            String v = System.getenv(name);
            return v == null || v.isEmpty() ? def : v;
        }
    }
}
