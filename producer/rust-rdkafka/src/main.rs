//! kconform's rust-rdkafka driver: an idempotent producer built on the
//! `rdkafka` crate, which builds and links its bundled librdkafka. It
//! follows kconform's driver contract (docs/clients.md) and prints the same
//! events as the confluent-kafka-go driver (producer/rdkafka/main.go), so
//! that two bindings of one C library can be told apart by what the
//! binding adds: settings from flags or KCONFORM_* environment variables,
//! one JSON event per line on stdout, the client's own logs on stderr, and
//! a clean stop on SIGTERM. Given --transactional-id it produces in
//! transactions (the contract's point 4), as the Go driver does.

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::bindings;
use rdkafka::client::ClientContext;
use rdkafka::config::{ClientConfig, RDKafkaLogLevel};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::producer::{
    BaseRecord, DeliveryResult, Producer, ProducerContext, PurgeConfig, ThreadedProducer,
};
use rdkafka::types::RDKafkaRespErr;
use serde::Serialize;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rust-rdkafka driver: {e}");
            ExitCode::from(2)
        }
    }
}

/// The contract's flags, each defaulting to its KCONFORM_* variable as in
/// the Go drivers.
struct Args {
    brokers: String,
    topic: String,
    partitions: i32,
    count: i64,
    rate: f64,
    run_id: String,
    set: BTreeMap<String, String>,
    /// The transactional flags, given only in a transactional run
    /// ("" for none).
    transactional_id: String,
    transaction_size: i64,
    abort_every: i64,
}

fn parse_args() -> Result<Args, String> {
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    let env_num = |name: &str, def: i64| env(name).trim().parse().unwrap_or(def);
    let mut a = Args {
        brokers: env("KCONFORM_BROKERS"),
        topic: env("KCONFORM_TOPIC"),
        partitions: env_num("KCONFORM_PARTITIONS", 1) as i32,
        count: env_num("KCONFORM_COUNT", 0),
        rate: env_num("KCONFORM_RATE", 0) as f64,
        run_id: env("KCONFORM_RUN_ID"),
        set: BTreeMap::new(),
        transactional_id: String::new(),
        transaction_size: 10,
        abort_every: 0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        // Go's flag syntax: -name or --name, then " value" or "=value".
        let flag = arg.trim_start_matches('-');
        if flag.len() == arg.len() {
            return Err(format!("unexpected argument {arg:?}"));
        }
        let (name, value) = match flag.split_once('=') {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => {
                let v = it
                    .next()
                    .ok_or_else(|| format!("flag {arg} needs a value"))?;
                (flag.to_string(), v)
            }
        };
        let bad = |what: &str| format!("flag --{name}: {value:?} is not {what}");
        match name.as_str() {
            "brokers" => a.brokers = value,
            "topic" => a.topic = value,
            "partitions" => a.partitions = value.parse().map_err(|_| bad("a number"))?,
            "count" => a.count = value.parse().map_err(|_| bad("a number"))?,
            "rate" => a.rate = value.parse().map_err(|_| bad("a number"))?,
            "run-id" => a.run_id = value,
            "transactional-id" => a.transactional_id = value,
            "transaction-size" => {
                a.transaction_size = value.parse().map_err(|_| bad("a number"))?
            }
            "abort-every" => a.abort_every = value.parse().map_err(|_| bad("a number"))?,
            "set" => match value.split_once('=') {
                Some((k, v)) if !k.is_empty() => {
                    a.set.insert(k.to_string(), v.to_string());
                }
                _ => return Err(format!("{value:?}: want key=value")),
            },
            _ => return Err(format!("unknown flag --{name}")),
        }
    }
    if a.brokers.is_empty() || a.topic.is_empty() || a.run_id.is_empty() || a.partitions < 1 {
        return Err("need --brokers, --topic, --run-id and --partitions >= 1".into());
    }
    if !a.transactional_id.is_empty() && (a.transaction_size < 1 || a.abort_every < 0) {
        return Err(format!(
            "need --transaction-size >= 1 and --abort-every >= 0, not {} and {}",
            a.transaction_size, a.abort_every
        ));
    }
    Ok(a)
}

/// One event line, in the field order and with the omissions of Go's
/// history.ClientLine, so both librdkafka drivers print alike.
#[derive(Serialize, Default)]
struct Line<'a> {
    name: &'a str,
    timestamp: i64,
    #[serde(skip_serializing_if = "str::is_empty")]
    topic: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    partition: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<i64>,
    #[serde(skip_serializing_if = "str::is_empty")]
    value: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    counter: Option<i64>,
    #[serde(skip_serializing_if = "str::is_empty")]
    run_id: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    exception: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    sent: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    acked: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    txn: Option<i64>,
    #[serde(skip_serializing_if = "str::is_empty")]
    transactional_id: &'a str,
}

/// What the main thread and librdkafka's callbacks (on the polling thread,
/// and on the main thread inside flush) share.
struct Shared {
    run_id: String,
    out: Mutex<std::io::Stdout>,
    acked: AtomicI64,
    /// A fatal error was raised: no record can succeed any more.
    dead: AtomicBool,
    /// The producer is being dropped: as with the Go driver's Close, the
    /// reports of the records it purges then are not the client's outcome
    /// but the driver's stop, and are not printed.
    closed: AtomicBool,
    /// The records of the transaction under way in a transactional run.
    txn: Mutex<TxnCounts>,
}

/// The records of the transaction under way: those handed to the client
/// without an outcome yet, and those that failed, which it cannot commit.
/// The delivery callback settles them.
#[derive(Default)]
struct TxnCounts {
    pending: i64,
    failed: i64,
}

impl Shared {
    fn print(&self, mut l: Line) {
        l.timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let mut b = serde_json::to_vec(&l).expect("an event always encodes");
        b.push(b'\n');
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        // A closed stdout leaves nothing to tell; the run ends on SIGTERM.
        let _ = out.write_all(&b).and_then(|()| out.flush());
    }

    fn txn_counts(&self) -> std::sync::MutexGuard<'_, TxnCounts> {
        self.txn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The producer's context: it prints delivery reports and forwards
/// librdkafka's logs to stderr.
struct Driver(Arc<Shared>);

impl ClientContext for Driver {
    // librdkafka's own format on stderr, as its default logger (the Go
    // driver's) writes it.
    fn log(&self, level: RDKafkaLogLevel, fac: &str, msg: &str) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        eprintln!(
            "%{}|{}.{:03}|{fac}| {msg}",
            level as i32,
            now.as_secs(),
            now.subsec_millis()
        );
    }

    // A fatal error is printed by the main thread, which can ask the
    // client for the error that caused it (rd_kafka_fatal_error).
    fn error(&self, error: KafkaError, reason: &str) {
        if error.rdkafka_error_code() == Some(RDKafkaErrorCode::Fatal) {
            self.0.dead.store(true, Ordering::SeqCst);
        } else {
            eprintln!("rust-rdkafka driver: error: {error}: {reason}");
        }
    }
}

impl ProducerContext for Driver {
    /// The record's transaction, if any.
    type DeliveryOpaque = Box<Option<i64>>;

    fn delivery(&self, result: &DeliveryResult<'_>, txn: Box<Option<i64>>) {
        self.report(result, *txn);
        // Settled once printed: a transaction ends after its records'
        // reports.
        if txn.is_some() {
            let mut c = self.0.txn_counts();
            c.pending -= 1;
            if result.is_err() {
                c.failed += 1;
            }
        }
    }
}

impl Driver {
    /// Prints a delivery report, with the record's transaction.
    fn report(&self, result: &DeliveryResult<'_>, txn: Option<i64>) {
        let s = &self.0;
        if s.closed.load(Ordering::SeqCst) {
            return;
        }
        let (m, err) = match result {
            Ok(m) => (m, None),
            Err((e, m)) => (m, Some(e)),
        };
        let value = String::from_utf8_lossy(m.payload().unwrap_or_default());
        let Some((run, part, counter)) = parse_payload(&value) else {
            return;
        };
        if run != s.run_id {
            return;
        }
        let mut l = Line {
            topic: m.topic(),
            partition: Some(part),
            counter: Some(counter),
            run_id: &s.run_id,
            value: &value,
            txn,
            ..Default::default()
        };
        let (exception, message);
        match err {
            Some(e) => {
                (exception, message) = err_text(e);
                l.name = "producer_send_error";
                l.exception = &exception;
                l.message = &message;
            }
            None => {
                s.acked.fetch_add(1, Ordering::SeqCst);
                l.name = "producer_send_success";
                l.offset = Some(m.offset());
            }
        }
        s.print(l);
    }
}

/// Ticker paces records at --rate as the Go driver's ticker does: one
/// record per tick, and no burst to catch up after a slow send beyond the
/// one tick Go's ticker keeps. Both the idempotent and the transactional
/// loop take their records from it.
struct Ticker {
    /// None sends as fast as the client takes records (--rate 0).
    interval: Option<Duration>,
    next: Instant,
}

impl Ticker {
    fn new(rate: f64) -> Self {
        Ticker {
            interval: (rate > 0.0).then(|| Duration::from_secs_f64(1.0 / rate)),
            next: Instant::now(),
        }
    }

    /// Waits for the next record's tick, asking stop meanwhile (every
    /// 10 ms at most, and once without a rate); false when stop says to
    /// send no more.
    fn wait(&mut self, mut stop: impl FnMut() -> bool) -> bool {
        let Some(iv) = self.interval else {
            return !stop();
        };
        self.next += iv;
        loop {
            if stop() {
                return false;
            }
            let now = Instant::now();
            if now >= self.next {
                self.next = now.checked_sub(iv).map_or(self.next, |t| self.next.max(t));
                return true;
            }
            thread::sleep((self.next - now).min(Duration::from_millis(10)));
        }
    }
}

/// librdkafka's syslog-style level number as the crate's level.
fn log_level(n: i32) -> RDKafkaLogLevel {
    use RDKafkaLogLevel::*;
    [Emerg, Alert, Critical, Error, Warning, Notice, Info, Debug][n.clamp(0, 7) as usize]
}

/// kc:<run id>:<partition>:<counter>, split as history.ParsePayload does.
fn parse_payload(v: &str) -> Option<(&str, i32, i64)> {
    let (run, rest) = v.strip_prefix("kc:")?.split_once(':')?;
    let (part, counter) = rest.split_once(':')?;
    Some((run, part.parse().ok()?, counter.parse().ok()?))
}

/// librdkafka's description of an error code (rd_kafka_err2str), which is
/// what confluent-kafka-go prints for it.
fn err2str(code: RDKafkaErrorCode) -> String {
    match RDKafkaRespErr::try_from(code as i32) {
        Ok(c) => unsafe { CStr::from_ptr(bindings::rd_kafka_err2str(c)) }
            .to_string_lossy()
            .into_owned(),
        Err(_) => code.to_string(),
    }
}

/// An error's exception and message as the Go driver prints them: the
/// code's description for both when the error carries a code.
fn err_text(e: &KafkaError) -> (String, String) {
    match e.rdkafka_error_code() {
        Some(c) => (err2str(c), err2str(c)),
        None => ("error".into(), e.to_string()),
    }
}

fn run() -> Result<(), String> {
    let a = parse_args()?;
    // Before anything is printed: a SIGTERM from then on is a stop.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, stop.clone()).map_err(|e| format!("signal: {e}"))?;
    }
    let mut conf = ClientConfig::new();
    // kconform:driver-settings begin (each listed with the library's reason in driver/own.go and docs/clients.md)
    conf.set("bootstrap.servers", &a.brokers)
        .set("enable.idempotence", "true")
        .set("acks", "all");
    // kconform:driver-settings end
    if !a.transactional_id.is_empty() {
        conf.set("transactional.id", &a.transactional_id);
    }
    for (k, v) in &a.set {
        conf.set(k, v);
    }
    // The crate sets librdkafka's log level after creating the client,
    // from the `log` crate's (none here): keep librdkafka's own default,
    // and its debug level when debug contexts are asked for, as librdkafka
    // itself does.
    let level = match (a.set.get("debug"), a.set.get("log_level")) {
        (Some(d), _) if !d.is_empty() => RDKafkaLogLevel::Debug,
        (_, Some(l)) => log_level(l.parse().map_err(|_| "log_level is not a number")?),
        _ => RDKafkaLogLevel::Info,
    };
    conf.set_log_level(level);

    let shared = Arc::new(Shared {
        run_id: a.run_id.clone(),
        out: Mutex::new(std::io::stdout()),
        acked: AtomicI64::new(0),
        dead: AtomicBool::new(false),
        closed: AtomicBool::new(false),
        txn: Mutex::new(TxnCounts::default()),
    });
    let p: ThreadedProducer<Driver> = conf
        .create_with_context(Driver(shared.clone()))
        .map_err(|e| format!("new producer: {e}"))?;
    let (hex, version) = rdkafka::util::get_rdkafka_version();
    eprintln!("rust-rdkafka driver: librdkafka {version} (0x{hex:x})");

    shared.print(Line {
        name: "startup_complete",
        ..Default::default()
    });
    if !a.transactional_id.is_empty() {
        let mut t = Txns {
            a: &a,
            p: &p,
            s: &shared,
            stop: &stop,
            stopped_at: None,
            fatal: false,
            sent: 0,
        };
        t.run();
        t.close();
        let sent = t.sent;
        finish(&shared, p, sent);
        return Ok(());
    }

    // Prints the fatal error once, and tells whether sending must stop.
    let mut fatal_printed = false;
    let mut stopping = || {
        if shared.dead.load(Ordering::SeqCst) && !fatal_printed {
            fatal_printed = true;
            let (exception, message) = match p.client().fatal_error() {
                Some((code, reason)) => (err2str(code), format!("Fatal error: {reason}")),
                None => ("Fatal error".into(), "Fatal error".into()),
            };
            shared.print(Line {
                name: "producer_fatal",
                exception: &exception,
                message: &message,
                ..Default::default()
            });
        }
        stop.load(Ordering::SeqCst) || shared.dead.load(Ordering::SeqCst)
    };

    let mut ticker = Ticker::new(a.rate);
    let mut counters = vec![0i64; a.partitions as usize];
    let mut sent: i64 = 0;
    let mut i: i64 = 0;
    while a.count == 0 || i < a.count {
        if !ticker.wait(&mut stopping) {
            break;
        }
        let part = (i % a.partitions as i64) as i32;
        let c = counters[part as usize];
        counters[part as usize] += 1;
        i += 1;
        let value = format!("kc:{}:{part}:{c}", a.run_id);
        let mut record = BaseRecord::with_opaque_to(&a.topic, Box::new(None))
            .partition(part)
            .payload(&value);
        loop {
            match p.send::<(), String>(record) {
                Ok(()) => {
                    sent += 1;
                    break;
                }
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r))
                    if !stopping() =>
                {
                    record = r;
                    thread::sleep(Duration::from_millis(10));
                }
                Err((e, _)) => {
                    let (exception, message) = err_text(&e);
                    shared.print(Line {
                        name: "producer_send_error",
                        topic: &a.topic,
                        partition: Some(part),
                        counter: Some(c),
                        run_id: &a.run_id,
                        value: &value,
                        exception: &exception,
                        message: &message,
                        ..Default::default()
                    });
                    break;
                }
            }
        }
    }

    // Records under way still get their outcome. A dead client never
    // delivers them: purge, so each gets its error report now. The bound
    // stays inside kconform's stop grace for a hung client.
    let deadline = Instant::now() + Duration::from_secs(20);
    while p.in_flight_count() > 0 && Instant::now() < deadline {
        stopping();
        if shared.dead.load(Ordering::SeqCst) {
            p.purge(PurgeConfig::default().queue().inflight());
        }
        let _ = p.flush(Duration::from_millis(500));
    }
    stopping();
    finish(&shared, p, sent);
    Ok(())
}

/// Drops the producer and prints the run's totals and its end.
fn finish(shared: &Shared, p: ThreadedProducer<Driver>, sent: i64) {
    shared.closed.store(true, Ordering::SeqCst);
    drop(p);
    let acked = shared.acked.load(Ordering::SeqCst);
    shared.print(Line {
        name: "tool_data",
        sent: Some(sent),
        acked: Some(acked),
        ..Default::default()
    });
    shared.print(Line {
        name: "shutdown_complete",
        ..Default::default()
    });
}

/// The bounds of a stopped transactional run, from the driver's first sight
/// of SIGTERM, inside kconform's 30 s stop grace, as in the Go driver: the
/// transaction under way flushes within FLUSH_GRACE and ends within
/// END_GRACE.
const FLUSH_GRACE: Duration = Duration::from_secs(15);
const END_GRACE: Duration = Duration::from_secs(25);
/// One init, commit or abort call: librdkafka reports one that runs out as
/// retriable, and the retry takes the call up where it was.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);
/// Keeps a step that fails at once from spinning.
const RETRY_BACKOFF: Duration = Duration::from_millis(100);

/// A failed transaction step as the Go driver prints it, and what
/// librdkafka says of it.
struct StepError {
    exception: String,
    message: String,
    fatal: bool,
    retriable: bool,
    requires_abort: bool,
}

fn step_error(e: &KafkaError) -> StepError {
    match e {
        // confluent-kafka-go marks a fatal error's message so.
        KafkaError::Transaction(r) => StepError {
            exception: err2str(r.code()),
            message: if r.is_fatal() {
                format!("Fatal error: {}", r.string())
            } else {
                r.string()
            },
            fatal: r.is_fatal(),
            retriable: r.is_retriable(),
            requires_abort: r.txn_requires_abort(),
        },
        // The crate's commit flushes first, with the commit's timeout: one
        // that runs out is the timeout librdkafka's own commit reports as
        // retriable.
        KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut) => {
            let (exception, message) = err_text(e);
            StepError {
                exception,
                message,
                fatal: false,
                retriable: true,
                requires_abort: false,
            }
        }
        _ => {
            let (exception, message) = err_text(e);
            StepError {
                exception,
                message,
                fatal: false,
                retriable: false,
                requires_abort: false,
            }
        }
    }
}

/// A transactional run (docs/clients.md, point 4), as the Go driver's
/// txnRun: transaction k begins, sends the next transaction_size records
/// round-robin, flushes them, then aborts when it is an abort_every-th one
/// or a record of it failed, else commits. Each step is printed with its
/// outcome. A fatal error (librdkafka raises fencing as one) stops it after
/// the failed step and producer_fatal.
struct Txns<'a> {
    a: &'a Args,
    p: &'a ThreadedProducer<Driver>,
    s: &'a Shared,
    stop: &'a AtomicBool,
    /// The first sight of SIGTERM.
    stopped_at: Option<Instant>,
    /// producer_fatal is printed.
    fatal: bool,
    sent: i64,
}

impl Txns<'_> {
    fn run(&mut self) {
        if !self.init() {
            return;
        }
        let a = self.a;
        let mut ticker = Ticker::new(a.rate);
        let mut counters = vec![0i64; a.partitions as usize];
        let mut i: i64 = 0;
        let mut txn: i64 = 0;
        while (a.count == 0 || i < a.count) && !self.stopped() && !self.dead() {
            *self.s.txn_counts() = TxnCounts::default();
            if let Err(e) = self.p.begin_transaction() {
                let e = step_error(&e);
                self.step("transaction_begin", txn, Some(&e));
                self.stop_fatal(txn, "begin failed", &e);
                return;
            }
            self.step("transaction_begin", txn, None);
            let mut k = 0;
            while k < a.transaction_size && (a.count == 0 || i < a.count) && !self.dead() {
                if !ticker.wait(|| self.stopped() || self.dead()) {
                    break;
                }
                let part = (i % a.partitions as i64) as i32;
                let c = counters[part as usize];
                counters[part as usize] += 1;
                i += 1;
                k += 1;
                self.produce(part, c, txn);
            }
            let flushed = self.flush();
            let failed = self.s.txn_counts().failed;
            let due = !(a.abort_every > 0 && (txn + 1) % a.abort_every == 0);
            if !self.end(txn, due && flushed && failed == 0) {
                return;
            }
            txn += 1;
        }
    }

    /// Initializes the transactional producer, again while it fails
    /// retriably. A failure is the first transaction's: it cannot begin.
    fn init(&mut self) -> bool {
        loop {
            let timeout = self.step_timeout();
            let Err(e) = self.p.init_transactions(timeout) else {
                return true;
            };
            let e = step_error(&e);
            if e.retriable && !self.late() && !self.dead() {
                eprintln!(
                    "rust-rdkafka driver: init transactions: {}; trying again",
                    e.message
                );
                thread::sleep(RETRY_BACKOFF);
                continue;
            }
            self.step("transaction_begin", 0, Some(&e));
            self.stop_fatal(0, "init transactions failed", &e);
            return false;
        }
    }

    /// Hands record c of partition part to the client in transaction txn,
    /// its opaque, which the delivery report carries back.
    fn produce(&mut self, part: i32, c: i64, txn: i64) {
        let a = self.a;
        let value = format!("kc:{}:{part}:{c}", a.run_id);
        // Counted before the client takes it: its report may come first.
        self.s.txn_counts().pending += 1;
        let mut record = BaseRecord::with_opaque_to(&a.topic, Box::new(Some(txn)))
            .partition(part)
            .payload(&value);
        loop {
            match self.p.send::<(), String>(record) {
                Ok(()) => {
                    self.sent += 1;
                    return;
                }
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r))
                    if !self.dead() && !self.late() =>
                {
                    record = r;
                    thread::sleep(Duration::from_millis(10));
                }
                Err((e, _)) => {
                    let (exception, message) = err_text(&e);
                    self.s.print(Line {
                        name: "producer_send_error",
                        topic: &a.topic,
                        partition: Some(part),
                        counter: Some(c),
                        run_id: &a.run_id,
                        value: &value,
                        exception: &exception,
                        message: &message,
                        txn: Some(txn),
                        ..Default::default()
                    });
                    let mut counts = self.s.txn_counts();
                    counts.pending -= 1;
                    counts.failed += 1;
                    return;
                }
            }
        }
    }

    /// Waits for the outcome of every record of the transaction under way,
    /// which must come before it ends; after a stop only for FLUSH_GRACE. A
    /// dead client never delivers its records: they are purged, so each
    /// gets its error report now. It tells whether every record has its
    /// outcome.
    fn flush(&mut self) -> bool {
        loop {
            if self.s.txn_counts().pending <= 0 {
                return true;
            }
            if self.dead() {
                self.p.purge(PurgeConfig::default().queue().inflight());
            }
            if self
                .stopped_since()
                .is_some_and(|at| at.elapsed() > FLUSH_GRACE)
            {
                return false;
            }
            // flush returns once the client holds nothing; the last
            // reports may still be on their way to being printed.
            if self.p.flush(Duration::from_millis(100)).is_ok() {
                thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// Commits transaction txn, or aborts it when commit is false or the
    /// commit failed, as librdkafka's error says: a retriable one is
    /// reported and the commit tried again, one that requires an abort (or
    /// says no more) is reported and the transaction aborted, a fatal one
    /// (fencing among them) stops the producer. It tells whether the
    /// producer can go on; when it cannot, producer_fatal is printed.
    fn end(&mut self, txn: i64, mut commit: bool) -> bool {
        while commit {
            let timeout = self.step_timeout();
            let Err(e) = self.p.commit_transaction(timeout) else {
                self.step("transaction_commit", txn, None);
                return true;
            };
            let e = step_error(&e);
            self.step("transaction_commit", txn, Some(&e));
            if e.fatal {
                self.stop_fatal(txn, "commit failed", &e);
                return false;
            }
            if e.retriable && !e.requires_abort && !self.late() && !self.dead() {
                thread::sleep(RETRY_BACKOFF);
            } else {
                commit = false;
            }
        }
        loop {
            let timeout = self.step_timeout();
            let Err(e) = self.p.abort_transaction(timeout) else {
                self.step("transaction_abort", txn, None);
                return true;
            };
            let e = step_error(&e);
            self.step("transaction_abort", txn, Some(&e));
            if !e.fatal && e.retriable && !self.late() && !self.dead() {
                thread::sleep(RETRY_BACKOFF);
                continue;
            }
            if !e.fatal && e.retriable && !self.dead() {
                // The stop's grace ran out, not the client: nothing fatal
                // to report; the transaction's records are purged at the
                // close and get their errors.
                return false;
            }
            self.stop_fatal(txn, "abort failed", &e);
            return false;
        }
    }

    /// Gives every record still held its outcome (none after an ended
    /// transaction: those of one that could not end are purged), and
    /// prints the client's fatal error if no step has.
    fn close(&mut self) {
        if self.dead() && !self.fatal {
            let (exception, message) = match self.p.client().fatal_error() {
                Some((code, reason)) => (err2str(code), format!("Fatal error: {reason}")),
                None => ("Fatal error".into(), "Fatal error".into()),
            };
            self.s.print(Line {
                name: "producer_fatal",
                exception: &exception,
                message: &message,
                ..Default::default()
            });
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while self.s.txn_counts().pending > 0 && Instant::now() < deadline {
            self.p.purge(PurgeConfig::default().queue().inflight());
            let _ = self.p.flush(Duration::from_millis(100));
        }
    }

    /// Prints a transaction step with its outcome.
    fn step(&self, name: &str, txn: i64, err: Option<&StepError>) {
        self.s.print(Line {
            name,
            txn: Some(txn),
            transactional_id: &self.a.transactional_id,
            exception: err.map_or("", |e| &e.exception),
            message: err.map_or("", |e| &e.message),
            ..Default::default()
        });
    }

    /// Prints producer_fatal after a failed step: the producer stops, as an
    /// application must once its transactional id is not its own to use
    /// (fenced) or its client failed for good.
    fn stop_fatal(&mut self, txn: i64, what: &str, e: &StepError) {
        self.fatal = true;
        let message = format!("transaction {txn}: {what}: {}; stopping", e.message);
        self.s.print(Line {
            name: "producer_fatal",
            txn: Some(txn),
            exception: &e.exception,
            message: &message,
            ..Default::default()
        });
    }

    fn dead(&self) -> bool {
        self.s.dead.load(Ordering::SeqCst)
    }

    /// Tells whether SIGTERM came, noting when the driver first saw it.
    fn stopped(&mut self) -> bool {
        self.stopped_since().is_some()
    }

    fn stopped_since(&mut self) -> Option<Instant> {
        if !self.stop.load(Ordering::SeqCst) {
            return None;
        }
        Some(*self.stopped_at.get_or_insert_with(Instant::now))
    }

    /// Tells whether a stopped run is past the time to end its
    /// transaction: a retriable failure is then final.
    fn late(&mut self) -> bool {
        self.stopped_since()
            .is_some_and(|at| at.elapsed() > END_GRACE)
    }

    /// Bounds one transaction step: STEP_TIMEOUT, and after a stop no
    /// later than END_GRACE from it.
    fn step_timeout(&mut self) -> Duration {
        match self.stopped_since() {
            Some(at) => STEP_TIMEOUT.min(
                (at + END_GRACE)
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(100)),
            ),
            None => STEP_TIMEOUT,
        }
    }
}
