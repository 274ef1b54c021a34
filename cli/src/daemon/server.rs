//! The accept loop, one thread per connection, signals and shutdown.

use super::addr::{Listener, Stream};
use super::protocol::{ErrorKind, Response, Status};
use super::service::Service;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often blocked reads and the accept loop look at the shutdown flag.
const POLL: Duration = Duration::from_millis(50);

pub struct ServerOptions {
    pub max_connections: usize,
    pub idle_timeout: Duration,
}

/// Serves until SIGTERM/SIGINT or a `shutdown` request; then finishes the
/// requests in flight, refuses new ones and removes the socket.
pub fn serve(svc: Arc<Service>, listener: Listener, opts: &ServerOptions) -> std::io::Result<()> {
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
        match listener.accept() {
            Ok(stream) => accept(&svc, stream, opts),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
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

fn accept(svc: &Arc<Service>, mut stream: Stream, opts: &ServerOptions) {
    if svc.connections.fetch_add(1, Ordering::SeqCst) >= opts.max_connections {
        svc.connections.fetch_sub(1, Ordering::SeqCst);
        let r = Response::status(
            Value::Null,
            Status::Busy,
            format!(
                "too many connections (--max-connections {})",
                opts.max_connections
            ),
        );
        let _ = stream.write_all(&r.to_line());
        return;
    }
    let svc2 = svc.clone();
    let idle = opts.idle_timeout;
    let spawned = std::thread::Builder::new()
        .name("onnxc-conn".into())
        .spawn(move || {
            if let Err(e) = connection(&svc2, stream, idle) {
                tracing::debug!(error = %e, "connection closed");
            }
            svc2.connections.fetch_sub(1, Ordering::SeqCst);
        });
    if let Err(e) = spawned {
        svc.connections.fetch_sub(1, Ordering::SeqCst);
        tracing::warn!(error = %e, "cannot spawn a connection thread");
    }
}

enum Line {
    Complete,
    TooLong,
    Eof,
    /// Nothing more yet (read timeout).
    Pending,
}

/// Reads up to a newline, keeping at most `max` bytes of it; partial lines
/// survive read timeouts in `buf`.
fn read_line(
    r: &mut impl BufRead,
    buf: &mut Vec<u8>,
    overflow: &mut bool,
    max: usize,
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
        if !*overflow {
            if buf.len() + chunk.len() > max {
                *overflow = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        r.consume(done);
        if newline {
            return Ok(if std::mem::take(overflow) {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

fn connection(svc: &Arc<Service>, stream: Stream, idle_timeout: Duration) -> std::io::Result<()> {
    stream.set_read_timeout(Some(POLL))?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    let mut overflow = false;
    let max = svc.max_line();
    let mut last = Instant::now();
    loop {
        match read_line(&mut reader, &mut buf, &mut overflow, max)? {
            Line::Complete => {
                if buf.iter().all(u8::is_ascii_whitespace) {
                    buf.clear();
                    continue;
                }
                let resp = svc.handle(&buf);
                buf.clear();
                writer.write_all(&resp.to_line())?;
                last = Instant::now();
            }
            Line::TooLong => {
                let r = Response::error(
                    Value::Null,
                    ErrorKind::BadRequest,
                    format!("request line longer than {max} bytes"),
                );
                writer.write_all(&r.to_line())?;
                last = Instant::now();
            }
            Line::Eof => return Ok(()),
            Line::Pending => {
                let idle = buf.is_empty() && !overflow;
                if idle && (svc.shutting_down() || last.elapsed() > idle_timeout) {
                    return Ok(());
                }
            }
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
        let (mut buf, mut of) = (Vec::new(), false);
        let mut got = Vec::new();
        loop {
            match read_line(&mut r, &mut buf, &mut of, 10).unwrap() {
                Line::Complete => got.push(String::from_utf8(std::mem::take(&mut buf)).unwrap()),
                Line::TooLong => got.push("<too long>".into()),
                Line::Eof => break,
                Line::Pending => unreachable!(),
            }
        }
        assert_eq!(got, ["short", "<too long>", "", "ok"]);
    }
}
