//! Request handling: validation, the cache, in-flight sharing, the worker
//! pool and the responses.

use super::cache::{hex, Cache, Key};
use super::files;
use super::flight::{Flight, Outcome, Source};
use super::pool::Pool;
use super::protocol::{self, DiagOut, ErrorKind, Op, Request, Response, Status, Timings};
use super::shared::{Holder, Lock, Shared, SharedConfig};
use super::work::{self, Emit};
use dashmap::DashMap;
use frontend::import::{ImportOptions, InputShape};
use pipeline::Failure;
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
    /// The shared tier (`--cache redis://...`).
    pub shared: Option<SharedConfig>,
    pub max_model_bytes: u64,
    pub request_timeout: Duration,
    /// `--auth-token-file` contents: every request but `health` carries it.
    pub token: Option<String>,
    /// Listening on TCP, where any local user may connect: `shutdown`
    /// needs the token (a unix socket's permissions guard it otherwise).
    pub tcp: bool,
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
    cancelled: AtomicU64,
    unauthorized: AtomicU64,
}

pub struct Service {
    cfg: Config,
    cache: Cache,
    shared: Option<Arc<Shared>>,
    pool: Pool,
    flights: DashMap<Key, Arc<Flight>>,
    counters: Counters,
    shutting_down: AtomicBool,
    pub connections: AtomicUsize,
    /// Bytes of partial request lines held by all connections.
    pub buffered: AtomicU64,
    started: Instant,
    /// Wall time of compiles (`--metrics-listen`, `stats`).
    compile_seconds: super::metrics::Histogram,
}

type Reply = Result<Response, Box<Response>>;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// How often a flight waiting on another daemon's lock polls Redis.
const REMOTE_POLL: Duration = Duration::from_millis(40);

/// What a compile or fold request asks for, checked.
struct Spec {
    op: Op,
    emit: Emit,
    stop_after: Option<String>,
    expansion_bound: Option<f64>,
    import: ImportOptions,
    lib_name: String,
}

impl Service {
    pub fn new(mut cfg: Config) -> std::io::Result<Service> {
        let shared = match cfg.shared.take() {
            Some(s) => Some(Arc::new(Shared::new(s).map_err(std::io::Error::other)?)),
            None => None,
        };
        if let Some(sh) = &shared {
            start_renewer(Arc::downgrade(sh))?;
        }
        Ok(Service {
            cache: Cache::open(cfg.cache_bytes, cfg.cache_dir.clone())?,
            shared,
            pool: Pool::new(cfg.workers, cfg.queue)?,
            cfg,
            flights: DashMap::new(),
            counters: Counters::default(),
            shutting_down: AtomicBool::new(false),
            connections: AtomicUsize::new(0),
            buffered: AtomicU64::new(0),
            started: Instant::now(),
            compile_seconds: Default::default(),
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

    /// Answers one request line; `scratch` holds what the request needs
    /// only while it is handled (the connection resets it afterwards).
    /// Answers one request line; also whether it proved the token (a
    /// request other than `health` that carried it).
    pub fn handle(
        self: &Arc<Self>,
        line: &[u8],
        scratch: &bumpalo::Bump,
        peer: &str,
    ) -> (Response, bool) {
        let t0 = Instant::now();
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        let mut proved = false;
        let (op, mut resp) = match protocol::parse(line) {
            Ok(req) => {
                let op = req.op;
                let id = req.id.clone();
                let auth = self.authorize(&req);
                proved = auth.is_ok() && self.requires_token() && op != Op::Health;
                let mut r = match auth.and_then(|()| self.dispatch(req, t0, scratch)) {
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
        let id = match &resp.id {
            Value::Null => "-".to_string(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        tracing::info!(
            %peer,
            %id,
            op = op.map_or("-", protocol::Op::name),
            status = tag(&resp.status),
            error = resp.error.map(|e| tag(&e)).unwrap_or_default(),
            cache = resp.cache.unwrap_or("-"),
            key = resp.key.as_deref().unwrap_or("-"),
            model = resp.model_sha256.as_deref().unwrap_or("-"),
            compile_ms = resp.timings.compile_ms,
            total_ms = resp.timings.total_ms,
            "request"
        );
        (resp, proved)
    }

    /// `health`: serving, and what works in a reduced way (`degraded`: the
    /// shared tier down, so every miss compiles here without cross-daemon
    /// dedup).
    fn health(&self) -> Value {
        let mut degraded = Vec::new();
        if self.shared.as_ref().is_some_and(|s| !s.is_up()) {
            degraded.push("shared cache tier unreachable");
        }
        json!({
            "healthy": true,
            "shutting_down": self.shutting_down(),
            "degraded": degraded,
        })
    }

    /// Clients must carry `--auth-token-file`'s token.
    pub fn requires_token(&self) -> bool {
        self.cfg.token.is_some()
    }

    /// With `--auth-token-file`, every request but `health` must carry the
    /// token; compared in constant time.
    fn authorize(&self, req: &Request<'_>) -> Result<(), Box<Response>> {
        let message = match &self.cfg.token {
            None if req.op == Op::Shutdown && self.cfg.tcp => {
                "shutdown over TCP needs --auth-token-file (or SIGTERM)"
            }
            None => return Ok(()),
            Some(expected) => {
                if req.op == Op::Health
                    || super::auth::token_matches(req.token.as_deref(), expected)
                {
                    return Ok(());
                }
                "missing or wrong token (see --auth-token-file)"
            }
        };
        self.counters.unauthorized.fetch_add(1, Ordering::Relaxed);
        Err(Box::new(Response::error(
            Value::Null,
            ErrorKind::Unauthorized,
            message,
        )))
    }

    fn dispatch(self: &Arc<Self>, req: Request<'_>, t0: Instant, scratch: &bumpalo::Bump) -> Reply {
        match req.op {
            Op::Health => Ok(Response {
                stats: Some(self.health()),
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
            Op::Auth => Ok(Response::ok(Value::Null)),
            Op::Compile | Op::Fold if self.shutting_down() => Err(Box::new(Response::status(
                Value::Null,
                Status::ShuttingDown,
                "the daemon is shutting down",
            ))),
            Op::Compile | Op::Fold => self.compile(req, t0, scratch),
        }
    }

    /// Checks the options of a compile or fold request.
    fn spec(req: &Request<'_>) -> Result<Spec, Box<Response>> {
        let bad = |msg: String| Box::new(Response::error(Value::Null, ErrorKind::BadRequest, msg));
        let emit = match (req.op, req.emit.as_deref()) {
            (Op::Fold, None | Some("onnx")) => Emit::Onnx,
            (Op::Fold, Some(e)) => return Err(bad(format!("fold always emits onnx, not '{e}'"))),
            (_, e) => Emit::parse(e.unwrap_or("llvm")).map_err(bad)?,
        };
        let stop_after = match (req.op, &req.stop_after) {
            (Op::Fold, Some(_)) => return Err(bad("fold takes no stop_after".into())),
            (_, s) => s.clone(),
        };
        // The defaults of `onnxc compile` and `onnxc fold`.
        let expansion_bound = match (req.op, req.fold_expansion_bound) {
            (_, Some(b)) if !(b.is_finite() && b > 0.0) => {
                return Err(bad(format!(
                    "fold_expansion_bound must be positive, not {b}"
                )))
            }
            (Op::Fold, b) => b,
            (_, b) => Some(b.unwrap_or(pipeline::DEFAULT_FOLD_EXPANSION_BOUND)),
        };
        if let Some(s) = &stop_after {
            let stages = pipeline::stage_names();
            if !stages.contains(&s.as_str()) {
                return Err(bad(format!(
                    "unknown stage '{s}' (stages: {})",
                    stages.join(", ")
                )));
            }
        }
        let input_shapes = req
            .input_shapes
            .iter()
            .map(|s| InputShape::parse(s).map_err(|e| bad(format!("input_shapes: {e}"))))
            .collect::<Result<_, _>>()?;
        let stem = match (&req.lib_name, &req.output) {
            (Some(n), _) => n.clone(),
            (None, Some(o)) => Path::new(o)
                .file_stem()
                .map_or("model".into(), |s| s.to_string_lossy().into_owned()),
            (None, None) => "model".into(),
        };
        Ok(Spec {
            op: req.op,
            emit,
            stop_after,
            expansion_bound,
            import: ImportOptions {
                input_shapes,
                ..ImportOptions::default()
            },
            lib_name: lower::capi::c_prefix(&stem),
        })
    }

    fn compile(self: &Arc<Self>, req: Request<'_>, t0: Instant, scratch: &bumpalo::Bump) -> Reply {
        let spec = Self::spec(&req)?;
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
            scratch,
        )?;
        let digest: [u8; 32] = Sha256::digest(model.bytes()).into();
        let key = cache_key(&spec, &digest);
        let reply = self.serve_key(
            key,
            &spec,
            (model, dir),
            output.as_deref(),
            (t0, req.timeout_ms),
        );
        // Every answer names the model (logs, clients correlating requests).
        let named = |mut r: Response| {
            r.model_sha256 = Some(hex(&digest));
            r
        };
        match reply {
            Ok(r) => Ok(named(r)),
            Err(r) => Err(Box::new(named(*r))),
        }
    }

    /// Answers a compile or fold whose cache key is `key`: from the cache,
    /// by joining the compile in flight, or by compiling.
    fn serve_key(
        self: &Arc<Self>,
        key: Key,
        spec: &Spec,
        (model, dir): (files::Model<'_>, PathBuf),
        output: Option<&Path>,
        (t0, timeout_ms): (Instant, Option<u64>),
    ) -> Reply {
        let respond = |data: &Arc<Vec<u8>>, cache: &'static str, queue_ms, compile_ms| {
            let t = Timings {
                queue_ms,
                compile_ms,
                total_ms: 0.0,
            };
            self.respond(data, spec, output, key, cache, t)
        };
        if let Some(data) = self.cache.get(&key) {
            return respond(&data, "hit", 0.0, 0.0);
        }
        let timeout = timeout_ms
            .map_or(self.cfg.request_timeout, Duration::from_millis)
            .min(self.cfg.request_timeout);
        let (flight, leader) = self.join_flight(key);
        if leader {
            let job = work::Job {
                emit: spec.emit,
                stop_after: spec.stop_after.clone(),
                dir,
                expansion_bound: spec.expansion_bound,
                import: spec.import.clone(),
                lib_name: spec.lib_name.clone(),
                max_external_bytes: self.cfg.max_model_bytes,
            };
            self.start(key, model.to_owned_bytes(), job, flight.clone());
        } else {
            self.counters.joined.fetch_add(1, Ordering::Relaxed);
        }
        let Some(outcome) = flight.wait(t0 + timeout) else {
            return Err(self.give_up(key, &flight, timeout));
        };
        match &*outcome {
            Outcome::Done {
                data,
                queue_ms,
                compile_ms,
                source,
            } => {
                let cache = if leader { source.cache_tag() } else { "joined" };
                respond(data, cache, *queue_ms, *compile_ms)
            }
            Outcome::Failed {
                kind,
                diagnostics,
                queue_ms,
                compile_ms,
            } => Err(Box::new(Response {
                status: Status::Error,
                error: Some(*kind),
                cache: Some(if leader { "miss" } else { "joined" }),
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

    /// The flight of `key` with this request counted as a waiter; true
    /// when this request leads it (it is new).
    fn join_flight(&self, key: Key) -> (Arc<Flight>, bool) {
        match self.flights.entry(key) {
            dashmap::Entry::Occupied(e) => {
                e.get().join();
                (e.get().clone(), false)
            }
            dashmap::Entry::Vacant(v) => {
                let f = Arc::new(Flight::default());
                f.join();
                v.insert(f.clone());
                (f, true)
            }
        }
    }

    /// A waiter's deadline passed: it leaves the flight; the last one to
    /// leave cancels the compile (under the map's entry lock, so no new
    /// request can join a cancelled flight).
    fn give_up(&self, key: Key, flight: &Arc<Flight>, timeout: Duration) -> Box<Response> {
        let cancelled = match self.flights.entry(key) {
            dashmap::Entry::Occupied(e) if Arc::ptr_eq(e.get(), flight) => {
                let last = flight.leave();
                if last {
                    flight.cancel.cancel();
                    e.remove();
                }
                last
            }
            _ => {
                flight.leave();
                false
            }
        };
        let what = if cancelled {
            self.counters.cancelled.fetch_add(1, Ordering::Relaxed);
            "its compile was cancelled"
        } else {
            "the compile goes on for the other requests waiting for it"
        };
        Box::new(Response::status(
            Value::Null,
            Status::Timeout,
            format!("no result within {} ms: {what}", timeout.as_millis()),
        ))
    }

    /// Starts a new flight: through the shared tier when there is one
    /// (on a thread of its own, as it may wait for another daemon), else
    /// straight to the workers.
    fn start(self: &Arc<Self>, key: Key, model: bytes::Bytes, job: work::Job, f: Arc<Flight>) {
        let Some(shared) = self.shared.clone() else {
            return self.submit(key, model, job, f, false);
        };
        let svc = self.clone();
        let (model2, job2, f2) = (model.clone(), job.clone(), f.clone());
        let spawned = std::thread::Builder::new()
            .name("onnxc-shared".into())
            .spawn(move || svc.drive_shared(&shared, key, model2, job2, f2));
        if spawned.is_err() {
            self.submit(key, model, job, f, false);
        }
    }

    /// The shared tier's part of a flight: a hit ends it; otherwise the
    /// compile lock decides who compiles. While another daemon holds it,
    /// this flight polls for its artifact; when the lock disappears without
    /// one (the holder failed or died), it takes the lock and compiles.
    fn drive_shared(
        self: &Arc<Self>,
        shared: &Shared,
        key: Key,
        model: bytes::Bytes,
        job: work::Job,
        f: Arc<Flight>,
    ) {
        let mut waited = false;
        // Since when the lock holds a value that is not a live onnxc lock.
        let mut foreign_since: Option<Instant> = None;
        // When this flight last told the holder it waits.
        let mut marked: Option<Instant> = None;
        loop {
            if f.cancel.is_cancelled() {
                return self.finish_flight(key, &f, cancelled_outcome());
            }
            if let Some(data) = shared.get(&key) {
                return self.shared_done(key, &f, data, waited);
            }
            match shared.try_lock(&key) {
                Lock::Acquired => {
                    // It may have been stored between the get and the lock.
                    if let Some(data) = shared.get(&key) {
                        shared.unlock(&key);
                        return self.shared_done(key, &f, data, waited);
                    }
                    if waited {
                        shared.stats.takeovers.fetch_add(1, Ordering::Relaxed);
                    }
                    return self.submit(key, model, job, f, true);
                }
                Lock::Unavailable => return self.submit(key, model, job, f, false),
                Lock::Held => {
                    if !waited {
                        shared.stats.lock_waits.fetch_add(1, Ordering::Relaxed);
                        waited = true;
                    }
                    if marked.is_none_or(|t| t.elapsed() >= shared.lock_ttl() / 2) {
                        shared.mark_waiting(&key);
                        marked = Some(Instant::now());
                    }
                    if let Holder::Foreign(value) = shared.holder(&key) {
                        let since = *foreign_since.get_or_insert_with(Instant::now);
                        if since.elapsed() >= shared.foreign_lock_grace() {
                            // Compiled without the lock: whoever wrote it may
                            // write it again.
                            shared.clear_foreign(&key, &value);
                            return self.submit(key, model, job, f, false);
                        }
                    } else {
                        foreign_since = None;
                    }
                    std::thread::sleep(REMOTE_POLL);
                }
            }
        }
    }

    fn shared_done(&self, key: Key, f: &Arc<Flight>, data: Vec<u8>, waited: bool) {
        let data = Arc::new(data);
        self.cache.insert(key, data.clone());
        let source = if waited {
            Source::SharedJoined
        } else {
            Source::SharedHit
        };
        self.finish_flight(
            key,
            f,
            Outcome::Done {
                data,
                queue_ms: 0.0,
                compile_ms: 0.0,
                source,
            },
        );
    }

    /// Queues the compile; `locked`: this daemon holds the shared lock.
    fn submit(
        self: &Arc<Self>,
        key: Key,
        model: bytes::Bytes,
        job: work::Job,
        f: Arc<Flight>,
        locked: bool,
    ) {
        let svc = self.clone();
        let f2 = f.clone();
        let enqueued = Instant::now();
        let submitted = self.pool.try_submit(Box::new(move || {
            svc.run_job(key, model, &job, &f2, enqueued, locked)
        }));
        if submitted.is_err() {
            if let (true, Some(sh)) = (locked, &self.shared) {
                sh.unlock(&key);
            }
            self.finish_flight(key, &f, Outcome::Busy);
        }
    }

    /// Removes the flight from the map (unless a newer one replaced it)
    /// and wakes its waiters.
    fn finish_flight(&self, key: Key, f: &Arc<Flight>, outcome: Outcome) {
        self.flights.remove_if(&key, |_, g| Arc::ptr_eq(g, f));
        f.complete(outcome);
    }

    /// Runs on a worker: compiles (unless cancelled meanwhile), caches in
    /// every tier, releases the shared lock, wakes the waiters. A panic in
    /// the compiler becomes an `internal` error for this request only.
    fn run_job(
        &self,
        key: Key,
        model: bytes::Bytes,
        job: &work::Job,
        f: &Arc<Flight>,
        enqueued: Instant,
        locked: bool,
    ) {
        let start = Instant::now();
        let queue_ms = ms(start - enqueued);
        let outcome = if f.cancel.is_cancelled() {
            cancelled_outcome()
        } else {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                ir::cancel::run(&f.cancel, || work::compile(model, job))
            }));
            let compile_ms = ms(start.elapsed());
            self.counters.compiles.fetch_add(1, Ordering::Relaxed);
            self.compile_seconds.record(compile_ms / 1e3);
            outcome_of(result, queue_ms, compile_ms, |data| {
                if let Some(data) = data {
                    if let Some(sh) = &self.shared {
                        sh.put(&key, &data);
                    }
                    self.cache.insert(key, data);
                }
            })
        };
        if let (true, Some(sh)) = (locked, &self.shared) {
            sh.unlock(&key);
        }
        if let Outcome::Failed {
            kind: ErrorKind::Internal,
            diagnostics,
            ..
        } = &outcome
        {
            tracing::error!(key = %hex(&key), diagnostics = ?diagnostics, "internal compiler error");
        }
        self.finish_flight(key, f, outcome);
    }

    fn respond(
        &self,
        data: &Arc<Vec<u8>>,
        spec: &Spec,
        output: Option<&Path>,
        key: Key,
        cache: &'static str,
        timings: Timings,
    ) -> Reply {
        let internal =
            |msg: String| Box::new(Response::error(Value::Null, ErrorKind::Internal, msg));
        // The part of the entry that is the artifact (a library's entry
        // also holds its header).
        let (range, header) = match spec.emit {
            Emit::Lib => {
                let (so, h) = work::split_lib(data)
                    .ok_or_else(|| internal("malformed library artifact".into()))?;
                let h = data.get(h).unwrap_or_default();
                (so, Some(String::from_utf8_lossy(h).into_owned()))
            }
            _ => (0..data.len(), None),
        };
        let bytes = data.get(range.clone()).unwrap_or_default();
        let mut r = Response {
            cache: Some(cache),
            key: Some(hex(&key)),
            bytes: Some(bytes.len() as u64),
            timings,
            ..Response::default()
        };
        let write = |path: &Path, bytes: &[u8]| {
            ir::output::write_file(path, bytes)
                .map_err(|e| internal(format!("cannot write '{}': {e}", path.display())))
        };
        if let Some(out) = output {
            write(out, bytes)?;
            if let Some(h) = &header {
                write(
                    &out.with_file_name(format!("{}.h", spec.lib_name)),
                    h.as_bytes(),
                )?;
            }
            r.artifact_path = Some(out.display().to_string());
        } else if spec.emit.is_text() {
            r.artifact = Some(protocol::Text(data.clone()));
        } else {
            r.artifact_base64 = Some(protocol::Base64(data.clone(), range));
            r.header = header;
        }
        Ok(r)
    }

    pub fn stats(&self) -> Value {
        let (compile_counts, compile_sum) = self.compile_seconds.snapshot();
        let c = &self.counters;
        let cs = &self.cache.stats;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let shared = self.shared.as_ref().map(|s| {
            let st = &s.stats;
            json!({
                "url": s.display_url(),
                "up": s.is_up(),
                "hits": get(&st.hits),
                "misses": get(&st.misses),
                "puts": get(&st.puts),
                "too_large": get(&st.too_large),
                "corrupt": get(&st.corrupt),
                "forged": get(&st.forged),
                "unverifiable": get(&st.unverifiable),
                "signed": s.signed(),
                "errors": get(&st.errors),
                "refused": get(&st.refused),
                "reconnects": get(&st.reconnects),
                "outages": get(&st.outages),
                "lock_waits": get(&st.lock_waits),
                "takeovers": get(&st.takeovers),
                "handoffs": get(&st.handoffs),
                "foreign_locks": get(&st.foreign_locks),
                "locks_held": s.locks_held(),
            })
        });
        json!({
            "requests": get(&c.requests),
            "ok": get(&c.ok),
            "errors": get(&c.errors),
            "busy": get(&c.busy),
            "timeouts": get(&c.timeouts),
            "compiles": get(&c.compiles),
            "joined": get(&c.joined),
            "cancelled": get(&c.cancelled),
            "unauthorized": get(&c.unauthorized),
            "in_flight": self.flights.len(),
            "connections": self.connections.load(Ordering::Relaxed),
            "buffered_bytes": get(&self.buffered),
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
            "shared": shared,
            "pool": {
                "workers": self.pool.workers(),
                "queue": self.cfg.queue,
                "queued": self.pool.queued(),
                "running": self.pool.running(),
                "reaping": super::reaper::pending(),
            },
            "rss_bytes": super::proc_status_kib("VmRSS").map(|k| k * 1024),
            // Without the binary's code pages, which grow as new paths run.
            "rss_anon_bytes": super::proc_status_kib("RssAnon").map(|k| k * 1024),
            "heap_bytes": super::heap_bytes(),
            "compile_seconds": {
                "buckets": super::metrics::COMPILE_BUCKETS,
                "counts": compile_counts,
                "sum": compile_sum,
            },
            // Interned names: the fixed vocabulary, whatever the models.
            "symbols": ir::Sym::table_len(),
            "uptime_s": self.started.elapsed().as_secs_f64(),
        })
    }
}

/// Renews the shared locks every third of their lifetime, for as long as
/// the tier exists.
fn start_renewer(shared: std::sync::Weak<Shared>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("onnxc-renew".into())
        .spawn(move || loop {
            let Some(period) = shared.upgrade().map(|s| s.lock_ttl() / 3) else {
                return;
            };
            std::thread::sleep(period);
            match shared.upgrade() {
                Some(s) => s.renew_all(),
                None => return,
            }
        })?;
    Ok(())
}

fn cancelled_outcome() -> Outcome {
    Outcome::Failed {
        kind: ErrorKind::Compile,
        diagnostics: vec![DiagOut::error(ir::cancel::CANCELLED)],
        queue_ms: 0.0,
        compile_ms: 0.0,
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
                source: Source::Compiled,
            }
        }
        Ok(Err(Failure::Diagnostic(d))) => failed(ErrorKind::Compile, vec![DiagOut::from_diag(&d)]),
        // Options that do not fit the model (input_shapes).
        Ok(Err(Failure::Usage(msg))) => failed(ErrorKind::BadRequest, vec![DiagOut::error(msg)]),
        Ok(Err(Failure::Io(msg))) => failed(ErrorKind::Compile, vec![DiagOut::error(msg)]),
        Ok(Err(Failure::Quiet)) => {
            failed(ErrorKind::Compile, vec![DiagOut::error("compile failed")])
        }
        Err(panic) => {
            let msg = pipeline::panic_message(panic.as_ref());
            failed(
                ErrorKind::Internal,
                vec![DiagOut::error(format!("internal compiler error: {msg}"))],
            )
        }
    }
}

/// sha256 over a format tag, the build (`build_id`), the options and the
/// model's sha256: equal keys mean byte-identical artifacts.
fn cache_key(spec: &Spec, model_digest: &[u8; 32]) -> Key {
    let mut h = Sha256::new();
    h.update(b"onnxc-artifact-v3\0");
    h.update(super::build_id::build_id().as_bytes());
    let mut shapes: Vec<String> = spec
        .import
        .input_shapes
        .iter()
        .map(|s| format!("{:?}={:?}", s.name, s.dims))
        .collect();
    shapes.sort();
    // Only a library's exported names depend on its name.
    let lib = if spec.emit == Emit::Lib {
        spec.lib_name.as_str()
    } else {
        "-"
    };
    let options = format!(
        "\0{:?}\0{}\0{}\0{:?}\0{shapes:?}\0{lib}\0",
        spec.op,
        spec.emit.name(),
        spec.stop_after.as_deref().unwrap_or("-"),
        spec.expansion_bound,
    );
    h.update(options.as_bytes());
    h.update(model_digest);
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
        let spec = |op, emit, stop: Option<&str>, bound, shapes: &[&str], lib: &str| Spec {
            op,
            emit,
            stop_after: stop.map(String::from),
            expansion_bound: bound,
            import: ImportOptions {
                input_shapes: shapes
                    .iter()
                    .map(|s| InputShape::parse(s).unwrap())
                    .collect(),
                ..ImportOptions::default()
            },
            lib_name: lib.into(),
        };
        let b = Some(16.0);
        let key = |s: Spec, model: &[u8]| cache_key(&s, &Sha256::digest(model).into());
        let base = || spec(Op::Compile, Emit::Llvm, None, b, &[], "model");
        let a = key(base(), b"m");
        assert_eq!(a, key(base(), b"m"));
        assert_ne!(a, key(base(), b"n"));
        assert_ne!(
            a,
            key(spec(Op::Compile, Emit::Memref, None, b, &[], "model"), b"m")
        );
        assert_ne!(
            a,
            key(
                spec(Op::Compile, Emit::Llvm, Some("bufferize"), b, &[], "model"),
                b"m"
            )
        );
        assert_ne!(
            a,
            key(
                spec(Op::Compile, Emit::Llvm, None, Some(4.0), &[], "model"),
                b"m"
            )
        );
        assert_ne!(
            a,
            key(
                spec(Op::Compile, Emit::Llvm, None, None, &[], "model"),
                b"m"
            )
        );
        assert_ne!(
            a,
            key(spec(Op::Fold, Emit::Llvm, None, b, &[], "model"), b"m")
        );
        let shaped = key(
            spec(Op::Compile, Emit::Llvm, None, b, &["x=1x3", "y=2"], "model"),
            b"m",
        );
        assert_ne!(a, shaped);
        let reordered = key(
            spec(Op::Compile, Emit::Llvm, None, b, &["y=2", "x=1x3"], "model"),
            b"m",
        );
        assert_eq!(
            shaped, reordered,
            "the order of input_shapes does not matter"
        );
        // The name matters for a library only.
        assert_eq!(
            a,
            key(spec(Op::Compile, Emit::Llvm, None, b, &[], "net"), b"m")
        );
        let lib = |n| key(spec(Op::Compile, Emit::Lib, None, b, &[], n), b"m");
        assert_ne!(lib("model"), lib("net"));
    }
}
