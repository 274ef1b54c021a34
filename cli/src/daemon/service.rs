//! Request handling: validation, the cache, in-flight sharing, the worker
//! pool and the responses.

use super::cache::{hex, Cache, Key};
use super::files;
use super::flight::{Flight, Outcome};
use super::pool::Pool;
use super::protocol::{self, DiagOut, ErrorKind, Op, Request, Response, Status, Timings};
use super::work::{self, Emit};
use crate::cmd::Failure;
use dashmap::DashMap;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Config {
    /// Canonical directory that request paths must stay inside.
    pub root: PathBuf,
    pub workers: usize,
    pub queue: usize,
    pub cache_bytes: u64,
    pub cache_dir: Option<PathBuf>,
    pub max_model_bytes: u64,
    pub request_timeout: Duration,
}

#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    ok: AtomicU64,
    errors: AtomicU64,
    busy: AtomicU64,
    timeouts: AtomicU64,
    compiles: AtomicU64,
    joined: AtomicU64,
}

pub struct Service {
    cfg: Config,
    cache: Cache,
    pool: Pool,
    flights: DashMap<Key, Arc<Flight>>,
    counters: Counters,
    shutting_down: AtomicBool,
    pub connections: AtomicUsize,
    started: Instant,
}

type Reply = Result<Response, Box<Response>>;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl Service {
    pub fn new(cfg: Config) -> std::io::Result<Service> {
        Ok(Service {
            cache: Cache::open(cfg.cache_bytes, cfg.cache_dir.clone())?,
            pool: Pool::new(cfg.workers, cfg.queue)?,
            cfg,
            flights: DashMap::new(),
            counters: Counters::default(),
            shutting_down: AtomicBool::new(false),
            connections: AtomicUsize::new(0),
            started: Instant::now(),
        })
    }

    pub fn shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }

    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }

    /// Waits for queued and running compiles, then stops the workers.
    pub fn stop_workers(&self) {
        self.pool.shutdown();
    }

    /// Longest a request may take; bounds the wait at shutdown.
    pub fn request_timeout(&self) -> Duration {
        self.cfg.request_timeout
    }

    /// Upper bound of a request line: the largest inline model plus slack.
    pub fn max_line(&self) -> usize {
        usize::try_from(self.cfg.max_model_bytes / 3 * 4 + (64 << 10)).unwrap_or(usize::MAX)
    }

    /// Answers one request line.
    pub fn handle(self: &Arc<Self>, line: &[u8]) -> Response {
        let t0 = Instant::now();
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        let (op, mut resp) = match protocol::parse(line) {
            Ok(req) => {
                let op = req.op;
                let id = req.id.clone();
                let mut r = match self.dispatch(req, t0) {
                    Ok(r) => r,
                    Err(r) => *r,
                };
                r.id = id;
                (Some(op), r)
            }
            Err(r) => (None, *r),
        };
        resp.timings.total_ms = ms(t0.elapsed());
        let counter = match resp.status {
            Status::Ok => &self.counters.ok,
            Status::Busy => &self.counters.busy,
            Status::Timeout => &self.counters.timeouts,
            Status::Error | Status::ShuttingDown => &self.counters.errors,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        tracing::info!(
            id = %resp.id,
            op = op.map_or("-", protocol::Op::name),
            status = tag(&resp.status),
            error = resp.error.map(|e| tag(&e)).unwrap_or_default(),
            cache = resp.cache.unwrap_or("-"),
            compile_ms = resp.timings.compile_ms,
            total_ms = resp.timings.total_ms,
            "request"
        );
        resp
    }

    fn dispatch(self: &Arc<Self>, req: Request, t0: Instant) -> Reply {
        match req.op {
            Op::Health => Ok(Response {
                stats: Some(json!({"healthy": true, "shutting_down": self.shutting_down()})),
                ..Response::ok(Value::Null)
            }),
            Op::Stats => Ok(Response {
                stats: Some(self.stats()),
                ..Response::ok(Value::Null)
            }),
            Op::Shutdown => {
                self.begin_shutdown();
                Ok(Response::ok(Value::Null))
            }
            Op::Compile | Op::Fold if self.shutting_down() => Err(Box::new(Response::status(
                Value::Null,
                Status::ShuttingDown,
                "the daemon is shutting down",
            ))),
            Op::Compile | Op::Fold => self.compile(req, t0),
        }
    }

    fn compile(self: &Arc<Self>, req: Request, t0: Instant) -> Reply {
        let bad = |msg: String| Box::new(Response::error(Value::Null, ErrorKind::BadRequest, msg));
        let emit = match (req.op, req.emit.as_deref()) {
            (Op::Fold, None | Some("onnx")) => Emit::Onnx,
            (Op::Fold, Some(e)) => return Err(bad(format!("fold always emits onnx, not '{e}'"))),
            (_, e) => Emit::parse(e.unwrap_or("llvm")).map_err(bad)?,
        };
        let stop_after = match (req.op, req.stop_after) {
            (Op::Fold, Some(_)) => return Err(bad("fold takes no stop_after".into())),
            (Op::Fold, None) => None,
            (_, s) => s,
        };
        // The defaults of `onnxc compile` and `onnxc fold`.
        let expansion_bound = match (req.op, req.fold_expansion_bound) {
            (_, Some(b)) if !(b.is_finite() && b > 0.0) => {
                return Err(bad(format!(
                    "fold_expansion_bound must be positive, not {b}"
                )))
            }
            (Op::Fold, b) => b,
            (_, b) => Some(b.unwrap_or(crate::driver::DEFAULT_FOLD_EXPANSION_BOUND)),
        };
        if let Some(s) = &stop_after {
            let stages = crate::driver::stage_names();
            if !stages.contains(&s.as_str()) {
                return Err(bad(format!(
                    "unknown stage '{s}' (stages: {})",
                    stages.join(", ")
                )));
            }
        }
        let output = req
            .output
            .as_deref()
            .map(|o| files::confine_output(&self.cfg.root, o))
            .transpose()?;
        let (model, dir) = files::load_model(
            &self.cfg.root,
            self.cfg.max_model_bytes,
            req.model_path.as_deref(),
            req.model_base64.as_deref(),
        )?;
        let key = cache_key(req.op, emit, stop_after.as_deref(), expansion_bound, &model);
        let finish = |data: Arc<Vec<u8>>, cache: &'static str, queue_ms, compile_ms| {
            self.respond(
                &data,
                emit,
                output.as_deref(),
                key,
                cache,
                queue_ms,
                compile_ms,
            )
        };
        if let Some(data) = self.cache.get(&key) {
            return finish(data, "hit", 0.0, 0.0);
        }
        let timeout = req
            .timeout_ms
            .map_or(self.cfg.request_timeout, Duration::from_millis)
            .min(self.cfg.request_timeout);
        let (flight, leader) = match self.flights.entry(key) {
            dashmap::Entry::Occupied(e) => (e.get().clone(), false),
            dashmap::Entry::Vacant(v) => {
                let f = Arc::new(Flight::default());
                v.insert(f.clone());
                (f, true)
            }
        };
        if leader {
            let job = work::Job {
                emit,
                stop_after,
                dir,
                expansion_bound,
            };
            let svc = self.clone();
            let f = flight.clone();
            let enqueued = Instant::now();
            let submitted = self.pool.try_submit(Box::new(move || {
                svc.run_job(key, model, &job, &f, enqueued)
            }));
            if submitted.is_err() {
                self.flights.remove(&key);
                flight.complete(Outcome::Busy);
            }
        } else {
            self.counters.joined.fetch_add(1, Ordering::Relaxed);
        }
        let cache = if leader { "miss" } else { "joined" };
        let Some(outcome) = flight.wait(t0 + timeout) else {
            return Err(Box::new(Response::status(
                Value::Null,
                Status::Timeout,
                format!(
                    "no result within {} ms (the compile goes on and will be cached)",
                    timeout.as_millis()
                ),
            )));
        };
        match &*outcome {
            Outcome::Done {
                data,
                queue_ms,
                compile_ms,
            } => finish(data.clone(), cache, *queue_ms, *compile_ms),
            Outcome::Failed {
                kind,
                diagnostics,
                queue_ms,
                compile_ms,
            } => Err(Box::new(Response {
                status: Status::Error,
                error: Some(*kind),
                cache: Some(cache),
                key: Some(hex(&key)),
                diagnostics: diagnostics.clone(),
                timings: Timings {
                    queue_ms: *queue_ms,
                    compile_ms: *compile_ms,
                    total_ms: 0.0,
                },
                ..Response::default()
            })),
            Outcome::Busy => Err(Box::new(Response::status(
                Value::Null,
                Status::Busy,
                format!(
                    "all {} workers are busy and the queue of {} is full; retry later",
                    self.pool.workers(),
                    self.cfg.queue
                ),
            ))),
        }
    }

    /// Runs on a worker: compiles, caches, wakes the waiters. A panic in
    /// the compiler becomes an `internal` error for this request only.
    fn run_job(
        &self,
        key: Key,
        model: bytes::Bytes,
        job: &work::Job,
        flight: &Flight,
        enqueued: Instant,
    ) {
        let start = Instant::now();
        let queue_ms = ms(start - enqueued);
        let result =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work::compile(model, job)));
        let compile_ms = ms(start.elapsed());
        self.counters.compiles.fetch_add(1, Ordering::Relaxed);
        let outcome = outcome_of(result, queue_ms, compile_ms, |data| {
            if let Some(data) = data {
                self.cache.insert(key, data);
            }
        });
        if let Outcome::Failed {
            kind: ErrorKind::Internal,
            diagnostics,
            ..
        } = &outcome
        {
            tracing::error!(key = %hex(&key), diagnostics = ?diagnostics, "internal compiler error");
        }
        self.flights.remove(&key);
        flight.complete(outcome);
    }

    #[allow(clippy::too_many_arguments)]
    fn respond(
        &self,
        data: &[u8],
        emit: Emit,
        output: Option<&Path>,
        key: Key,
        cache: &'static str,
        queue_ms: f64,
        compile_ms: f64,
    ) -> Reply {
        let mut r = Response {
            cache: Some(cache),
            key: Some(hex(&key)),
            bytes: Some(data.len() as u64),
            timings: Timings {
                queue_ms,
                compile_ms,
                total_ms: 0.0,
            },
            ..Response::default()
        };
        if let Some(out) = output {
            ir::output::write_file(out, data).map_err(|e| {
                Box::new(Response::error(
                    Value::Null,
                    ErrorKind::Internal,
                    format!("cannot write '{}': {e}", out.display()),
                ))
            })?;
            r.artifact_path = Some(out.display().to_string());
        } else if emit.is_text() {
            r.artifact = Some(String::from_utf8_lossy(data).into_owned());
        } else {
            r.artifact_base64 = Some(super::b64::encode(data));
        }
        Ok(r)
    }

    fn stats(&self) -> Value {
        let c = &self.counters;
        let cs = &self.cache.stats;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        json!({
            "requests": get(&c.requests),
            "ok": get(&c.ok),
            "errors": get(&c.errors),
            "busy": get(&c.busy),
            "timeouts": get(&c.timeouts),
            "compiles": get(&c.compiles),
            "joined": get(&c.joined),
            "in_flight": self.flights.len(),
            "connections": self.connections.load(Ordering::Relaxed),
            "cache": {
                "entries": self.cache.len(),
                "bytes": self.cache.bytes(),
                "bound": self.cache.bound(),
                "hits": get(&cs.hits),
                "misses": get(&cs.misses),
                "evictions": get(&cs.evictions),
                "loaded": get(&cs.loaded),
                "corrupt": get(&cs.corrupt),
                "persist_errors": get(&cs.persist_errors),
                "dir": self.cfg.cache_dir.as_ref().map(|d| d.display().to_string()),
            },
            "pool": {
                "workers": self.pool.workers(),
                "queue": self.cfg.queue,
                "queued": self.pool.queued(),
                "running": self.pool.running(),
            },
            "rss_bytes": super::proc_status_kib("VmRSS").map(|k| k * 1024),
            "uptime_s": self.started.elapsed().as_secs_f64(),
        })
    }
}

/// The wire name of a status or error kind, for logs.
fn tag<T: serde::Serialize>(t: &T) -> String {
    match serde_json::to_value(t) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// Turns what a compile returned (or its panic) into the shared outcome;
/// `cache` receives the artifact when it may be cached.
fn outcome_of(
    result: std::thread::Result<Result<work::Compiled, Failure>>,
    queue_ms: f64,
    compile_ms: f64,
    cache: impl FnOnce(Option<Arc<Vec<u8>>>),
) -> Outcome {
    let failed = |kind, diagnostics| Outcome::Failed {
        kind,
        diagnostics,
        queue_ms,
        compile_ms,
    };
    match result {
        Ok(Ok(c)) => {
            let data = Arc::new(c.data);
            cache(c.cacheable.then(|| data.clone()));
            Outcome::Done {
                data,
                queue_ms,
                compile_ms,
            }
        }
        Ok(Err(Failure::Diagnostic(d))) => failed(ErrorKind::Compile, vec![DiagOut::from_diag(&d)]),
        Ok(Err(Failure::Io(msg) | Failure::Usage(msg))) => {
            failed(ErrorKind::Compile, vec![DiagOut::error(msg)])
        }
        Ok(Err(Failure::Quiet)) => {
            failed(ErrorKind::Compile, vec![DiagOut::error("compile failed")])
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            failed(
                ErrorKind::Internal,
                vec![DiagOut::error(format!("internal compiler error: {msg}"))],
            )
        }
    }
}

/// sha256 over a format tag, the compiler version, the options and the
/// model bytes: equal keys mean byte-identical artifacts.
fn cache_key(
    op: Op,
    emit: Emit,
    stop_after: Option<&str>,
    expansion_bound: Option<f64>,
    model: &[u8],
) -> Key {
    let mut h = Sha256::new();
    h.update(b"onnxc-artifact-v1\0");
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    let options = format!(
        "\0{op:?}\0{}\0{}\0{expansion_bound:?}\0",
        emit.name(),
        stop_after.unwrap_or("-")
    );
    h.update(options.as_bytes());
    h.update(model);
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_compile_becomes_an_internal_error() {
        let result = std::panic::catch_unwind(|| -> Result<work::Compiled, Failure> {
            panic!("kernel exploded at {}", 42)
        });
        let o = outcome_of(result, 1.0, 2.0, |_| panic!("nothing to cache"));
        let Outcome::Failed {
            kind, diagnostics, ..
        } = o
        else {
            panic!("not a failure");
        };
        assert_eq!(kind, ErrorKind::Internal);
        assert!(diagnostics[0].message.contains("kernel exploded at 42"));
    }

    #[test]
    fn keys_separate_options() {
        let b = Some(16.0);
        let key = |op, emit, stop, bound, model: &[u8]| cache_key(op, emit, stop, bound, model);
        let a = key(Op::Compile, Emit::Llvm, None, b, b"m");
        assert_ne!(a, key(Op::Compile, Emit::Memref, None, b, b"m"));
        assert_ne!(a, key(Op::Compile, Emit::Llvm, Some("bufferize"), b, b"m"));
        assert_ne!(a, key(Op::Compile, Emit::Llvm, None, b, b"n"));
        assert_ne!(a, key(Op::Compile, Emit::Llvm, None, Some(4.0), b"m"));
        assert_ne!(a, key(Op::Compile, Emit::Llvm, None, None, b"m"));
        assert_ne!(a, key(Op::Fold, Emit::Llvm, None, b, b"m"));
        assert_eq!(a, key(Op::Compile, Emit::Llvm, None, b, b"m"));
    }
}
