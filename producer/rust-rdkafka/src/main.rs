//! kconform's rust-rdkafka driver: an idempotent producer built on the
//! `rdkafka` crate, which builds and links its bundled librdkafka. It
//! follows kconform's driver contract (docs/clients.md) and prints the same
//! events as the confluent-kafka-go driver (producer/rdkafka/main.go), so
//! that two bindings of one C library can be told apart by what the
//! binding adds: settings from flags or KCONFORM_* environment variables,
//! one JSON event per line on stdout, the client's own logs on stderr, and
//! a clean stop on SIGTERM.

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
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
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
    conf.set("bootstrap.servers", &a.brokers)
        .set("enable.idempotence", "true")
        .set("acks", "all");
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

    // A ticker as the Go driver's: one record per tick, no bursts to
    // catch up after a slow send beyond the one tick Go's ticker keeps.
    let interval = (a.rate > 0.0).then(|| Duration::from_secs_f64(1.0 / a.rate));
    let mut next = Instant::now();
    let mut counters = vec![0i64; a.partitions as usize];
    let mut sent: i64 = 0;
    let mut i: i64 = 0;
    'produce: while a.count == 0 || i < a.count {
        if let Some(iv) = interval {
            next += iv;
            loop {
                if stopping() {
                    break 'produce;
                }
                let now = Instant::now();
                if now >= next {
                    next = now.checked_sub(iv).map_or(next, |t| next.max(t));
                    break;
                }
                thread::sleep((next - now).min(Duration::from_millis(10)));
            }
        } else if stopping() {
            break;
        }
        let part = (i % a.partitions as i64) as i32;
        let c = counters[part as usize];
        counters[part as usize] += 1;
        i += 1;
        let value = format!("kc:{}:{part}:{c}", a.run_id);
        let mut record = BaseRecord::to(&a.topic).partition(part).payload(&value);
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
    Ok(())
}
