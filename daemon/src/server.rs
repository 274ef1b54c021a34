//! The accept loop, one thread per connection, signals and shutdown.

use super::addr::{Listener, Stream};
use super::gate::{log_auth_failure, Gate, Slot};
use super::protocol::{ErrorKind, Response, Status};
use super::service::Service;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often blocked reads and the accept loop look at the shutdown flag.
const POLL: Duration = Duration::from_millis(50);
/// A connection's request scratch is kept for the next request up to this
/// size; a larger one (a big inline model) is freed.
const KEEP_SCRATCH: usize = 1 << 20;
/// With `--auth-token-file`, a connection that has not proved the token
/// yet has request lines of at most this many bytes (a request by path
/// fits; an inline model follows an `auth` request) and `--auth-timeout`
/// to prove it; `gate` bounds how many there are. A reply not read within
/// `--write-timeout` closes any connection (a client that never reads
/// cannot hold a thread, or shutdown).
const PRE_AUTH_LINE: usize = 8 << 10;

pub struct ServerOptions {
    pub max_connections: usize,
    pub idle_timeout: Duration,
    /// Time to complete a request line after its first byte.
    pub line_timeout: Duration,
    /// Bound of the bytes of partial lines held by all connections.
    pub max_buffered: u64,
    /// With a token: time to prove it after connecting.
    pub auth_timeout: Duration,
    /// Time a reply may wait for the client to read it.
    pub write_timeout: Duration,
}

/// Serves until SIGTERM/SIGINT or a `shutdown` request; then finishes the
/// requests in flight, refuses new ones and removes the socket.
pub fn serve(svc: Arc<Service>, listener: Listener, opts: &ServerOptions) -> std::io::Result<()> {
    let gate = Gate::new(opts.max_connections / 4);
    let signalled = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, signalled.clone())?;
    }
    listener.set_nonblocking()?;
    println!("onnxc serve: listening on {}", listener.display());
    let _ = std::io::stdout().flush();
    tracing::info!(addr = %listener.display(), "listening");
    while !svc.shutting_down() {
        if signalled.load(Ordering::SeqCst) {
            tracing::info!("signal received: shutting down");
            svc.begin_shutdown();
            break;
        }
        match listener.wait_pending(POLL) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                tracing::warn!(error = %e, "poll failed");
                std::thread::sleep(POLL);
                continue;
            }
        }
        match listener.accept() {
            Ok(stream) => accept(&svc, &gate, stream, opts),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                std::thread::sleep(POLL);
            }
        }
    }
    listener.remove();
    drop(listener);
    // Connections finish their current request, then close.
    let deadline = Instant::now() + svc.request_timeout() + Duration::from_secs(5);
    while svc.connections.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        std::thread::sleep(POLL);
    }
    svc.stop_workers();
    tracing::info!("stopped");
    Ok(())
}

fn accept(svc: &Arc<Service>, gate: &Arc<Gate>, mut stream: Stream, opts: &ServerOptions) {
    let busy = |stream: &mut Stream, msg: String| {
        let r = Response::status(Value::Null, Status::Busy, msg);
        let _ = stream.set_write_timeout(Some(POLL));
        let _ = stream.write_all(&r.to_line());
    };
    if svc.connections.fetch_add(1, Ordering::SeqCst) >= opts.max_connections {
        svc.connections.fetch_sub(1, Ordering::SeqCst);
        let n = opts.max_connections;
        return busy(
            &mut stream,
            format!("too many connections (--max-connections {n})"),
        );
    }
    let slot = match svc.requires_token() {
        true => match Gate::admit(gate, stream.peer_ip(), stream.try_clone().ok()) {
            Some(s) => Some(s),
            None => {
                svc.connections.fetch_sub(1, Ordering::SeqCst);
                let msg = "this address holds too many connections that have not proved the token";
                return busy(&mut stream, msg.to_string());
            }
        },
        false => None,
    };
    let svc2 = svc.clone();
    let limits = Limits {
        idle: opts.idle_timeout,
        line: opts.line_timeout,
        max_buffered: opts.max_buffered,
        auth: opts.auth_timeout,
        write: opts.write_timeout,
    };
    let spawned = std::thread::Builder::new()
        .name("onnxc-conn".into())
        .spawn(move || {
            if let Err(e) = connection(&svc2, stream, &limits, slot) {
                tracing::debug!(error = %e, "connection closed");
            }
            svc2.connections.fetch_sub(1, Ordering::SeqCst);
        });
    if let Err(e) = spawned {
        svc.connections.fetch_sub(1, Ordering::SeqCst);
        tracing::warn!(error = %e, "cannot spawn a connection thread");
    }
}

struct Limits {
    idle: Duration,
    line: Duration,
    max_buffered: u64,
    auth: Duration,
    write: Duration,
}

enum Line {
    Complete,
    /// Longer than the per-line bound.
    TooLong,
    /// The bound on bytes buffered across connections was reached.
    Busy,
    Eof,
    /// Nothing more yet (read timeout).
    Pending,
}

/// Why the rest of a line is being skipped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Skip {
    No,
    TooLong,
    Busy,
}

/// This connection's share of the daemon-wide bound on buffered bytes
/// (`--max-buffered-bytes`); given back when the line is done or dropped.
struct Budget<'a> {
    total: &'a AtomicU64,
    max: u64,
    mine: u64,
}

impl Budget<'_> {
    fn reserve(&mut self, n: usize) -> bool {
        let n = n as u64;
        if self.total.fetch_add(n, Ordering::SeqCst) + n > self.max {
            self.total.fetch_sub(n, Ordering::SeqCst);
            return false;
        }
        self.mine += n;
        true
    }
    fn release(&mut self) {
        self.total
            .fetch_sub(std::mem::take(&mut self.mine), Ordering::SeqCst);
    }
}

impl Drop for Budget<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

/// Reads up to a newline, keeping at most `max` bytes of it and only what
/// `budget` grants; partial lines survive read timeouts in `buf`.
fn read_line(
    r: &mut impl BufRead,
    buf: &mut Vec<u8>,
    skip: &mut Skip,
    max: usize,
    budget: &mut Budget<'_>,
) -> std::io::Result<Line> {
    loop {
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(Line::Pending)
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(Line::Eof);
        }
        let (chunk, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (&avail[..i], i + 1),
            None => (avail, avail.len()),
        };
        let newline = done > chunk.len();
        if *skip == Skip::No {
            if buf.len() + chunk.len() > max {
                *skip = Skip::TooLong;
            } else if !budget.reserve(chunk.len()) {
                *skip = Skip::Busy;
            } else {
                buf.extend_from_slice(chunk);
            }
            if *skip != Skip::No {
                *buf = Vec::new();
                budget.release();
            }
        }
        r.consume(done);
        if newline {
            return Ok(match std::mem::replace(skip, Skip::No) {
                Skip::No => Line::Complete,
                Skip::TooLong => Line::TooLong,
                Skip::Busy => Line::Busy,
            });
        }
    }
}

/// What to do while a line is pending: wait, or close (after an optional
/// last answer).
enum Wait {
    More,
    Close(Option<Box<Response>>),
}

/// A connection with nothing complete to handle: idle, a partial line
/// past `--line-timeout`, or a token not proved in time.
fn pending(
    svc: &Service,
    limits: &Limits,
    partial: bool,
    clocks: (Instant, &mut Option<Instant>, Instant),
    proving: bool,
) -> Wait {
    let (last, line_start, accepted) = clocks;
    if proving && accepted.elapsed() > limits.auth {
        let msg = format!(
            "the token was not proved within {} s of connecting (--auth-timeout)",
            limits.auth.as_secs_f64()
        );
        let r = Response::error(Value::Null, ErrorKind::Unauthorized, msg);
        return Wait::Close(Some(Box::new(r)));
    }
    if !partial {
        *line_start = None;
        return match svc.shutting_down() || last.elapsed() > limits.idle {
            true => Wait::Close(None),
            false => Wait::More,
        };
    }
    let started = *line_start.get_or_insert_with(Instant::now);
    if started.elapsed() <= limits.line {
        return Wait::More;
    }
    let msg = format!(
        "request line not completed within {} s of its first byte",
        limits.line.as_secs_f64()
    );
    let r = Response::error(Value::Null, ErrorKind::BadRequest, msg);
    Wait::Close(Some(Box::new(r)))
}

/// Writes `buf` whole within `limit` or fails: a socket timeout bounds
/// each `write` call only, and a client that never reads still lets one
/// through now and then (the kernel compacts its receive queue), which
/// held SIGTERM for 6 s under a 2 s `--write-timeout`.
fn write_within(w: &mut Stream, mut buf: &[u8], limit: Duration) -> std::io::Result<()> {
    let deadline = Instant::now() + limit;
    while !buf.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        w.set_write_timeout(Some(left))?;
        match w.write(buf) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = buf.get(n..).unwrap_or_default(),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The last line of a tokenless connection a newer one took the place of.
fn evicted() -> Response {
    let msg = "closed for a newer connection: too many connections have not proved the token";
    Response::status(Value::Null, Status::Busy, msg.to_string())
}

/// The answer to a line longer than `max` bytes.
fn too_long(max: usize, proving: bool) -> Response {
    let hint = match proving {
        true => " before the token is proved (send {\"op\":\"auth\",\"token\":...} first)",
        false => "",
    };
    let msg = format!("request line longer than {max} bytes{hint}");
    Response::error(Value::Null, ErrorKind::BadRequest, msg)
}

fn connection(
    svc: &Arc<Service>,
    stream: Stream,
    limits: &Limits,
    mut slot: Option<Slot>,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(POLL))?;
    stream.set_write_timeout(Some(limits.write))?;
    let peer = stream.peer_ip();
    let peer_name = peer.map_or_else(|| "unix".to_string(), |p| p.to_string());
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    let mut skip = Skip::No;
    let mut budget = Budget {
        total: &svc.buffered,
        max: limits.max_buffered,
        mine: 0,
    };
    // Per-request scratch (decoded inline model, response line), reset
    // when the request is answered.
    let mut scratch = bumpalo::Bump::new();
    let (accepted, mut last) = (Instant::now(), Instant::now());
    // When the first byte of the pending line arrived.
    let mut line_start: Option<Instant> = None;
    loop {
        let max = match slot {
            Some(_) => svc.max_line().min(PRE_AUTH_LINE),
            None => svc.max_line(),
        };
        // A line read once shutdown began is the connection's last.
        let mut last_line = false;
        let resp = match read_line(&mut reader, &mut buf, &mut skip, max, &mut budget)? {
            Line::Complete if buf.iter().all(u8::is_ascii_whitespace) => None,
            Line::Complete => {
                last_line = svc.shutting_down();
                let (r, proved) = svc.handle(&buf, &scratch, &peer_name);
                if proved {
                    slot = None;
                }
                Some(r)
            }
            Line::TooLong => Some(too_long(max, slot.is_some())),
            Line::Busy => Some(Response::status(
                Value::Null,
                Status::Busy,
                format!(
                    "the daemon holds too many request bytes (--max-buffered-bytes {}); retry later",
                    limits.max_buffered
                ),
            )),
            Line::Eof => return Ok(()),
            Line::Pending if slot.as_ref().is_some_and(Slot::evicted) => {
                let _ = write_within(&mut writer, &evicted().to_line(), limits.write);
                return Ok(());
            }
            Line::Pending => {
                let partial = !buf.is_empty() || skip != Skip::No;
                let clocks = (last, &mut line_start, accepted);
                match pending(svc, limits, partial, clocks, slot.is_some()) {
                    Wait::More => continue,
                    Wait::Close(r) => {
                        if let Some(r) = r {
                            let _ = write_within(&mut writer, &r.to_line(), limits.write);
                        }
                        return Ok(());
                    }
                }
            }
        };
        buf = Vec::new();
        budget.release();
        line_start = None;
        last = Instant::now();
        if let Some(r) = resp {
            write_within(&mut writer, r.line_in(&scratch), limits.write)?;
            if r.error == Some(ErrorKind::Unauthorized) {
                log_auth_failure(peer);
                return Ok(());
            }
        }
        if last_line {
            // A client that keeps pipelining cannot hold the exit.
            return Ok(());
        }
        if scratch.allocated_bytes() > KEEP_SCRATCH {
            scratch = bumpalo::Bump::new();
        } else {
            scratch.reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded() {
        let input = b"short\nthis one is far too long\n\nok\npartial".to_vec();
        let mut r = BufReader::with_capacity(4, &input[..]);
        let (mut buf, mut skip) = (Vec::new(), Skip::No);
        let total = AtomicU64::new(0);
        let mut budget = Budget {
            total: &total,
            max: u64::MAX,
            mine: 0,
        };
        let mut got = Vec::new();
        loop {
            match read_line(&mut r, &mut buf, &mut skip, 10, &mut budget).unwrap() {
                Line::Complete => {
                    got.push(String::from_utf8(std::mem::take(&mut buf)).unwrap());
                    budget.release();
                }
                Line::TooLong => got.push("<too long>".into()),
                Line::Busy => got.push("<busy>".into()),
                Line::Eof => break,
                Line::Pending => unreachable!(),
            }
        }
        assert_eq!(got, ["short", "<too long>", "", "ok"]);
        assert_eq!(total.load(Ordering::SeqCst), 7, "the partial line is held");
        drop(budget);
        assert_eq!(total.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn the_shared_budget_says_busy() {
        let total = AtomicU64::new(90);
        let mut budget = Budget {
            total: &total,
            max: 100,
            mine: 0,
        };
        let input = b"0123456789ab\nok\n".to_vec();
        let mut r = BufReader::with_capacity(64, &input[..]);
        let (mut buf, mut skip) = (Vec::new(), Skip::No);
        let mut read = || read_line(&mut r, &mut buf, &mut skip, 1000, &mut budget).unwrap();
        assert!(matches!(read(), Line::Busy));
        assert!(matches!(read(), Line::Complete));
        assert_eq!(buf, b"ok");
        assert_eq!(total.load(Ordering::SeqCst), 92);
    }
}
