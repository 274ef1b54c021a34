//! `--metrics-listen ADDR`: the daemon's counters in Prometheus's text
//! exposition format, `GET /metrics` over plain HTTP/1.1, one request per
//! connection, on a thread of its own. Read-only and tokenless (like
//! `health`); a non-loopback address needs `--allow-remote`.

use super::addr::{Listener, Stream};
use super::service::Service;
use serde_json::Value;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Upper bounds of the compile-time histogram's buckets, in seconds.
pub const COMPILE_BUCKETS: [f64; 10] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

/// Compile seconds: a count per bucket (the last for the rest) and the sum
/// in microseconds.
#[derive(Default)]
pub struct Histogram {
    counts: [AtomicU64; COMPILE_BUCKETS.len() + 1],
    sum_us: AtomicU64,
}

impl Histogram {
    pub fn record(&self, seconds: f64) {
        let i = COMPILE_BUCKETS
            .iter()
            .position(|&b| seconds <= b)
            .unwrap_or(COMPILE_BUCKETS.len());
        if let Some(c) = self.counts.get(i) {
            c.fetch_add(1, Ordering::Relaxed);
        }
        self.sum_us
            .fetch_add((seconds * 1e6) as u64, Ordering::Relaxed);
    }

    /// Per-bucket counts (not cumulative) and the sum in seconds.
    pub fn snapshot(&self) -> (Vec<u64>, f64) {
        let counts = self
            .counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        (counts, self.sum_us.load(Ordering::Relaxed) as f64 / 1e6)
    }
}

/// Serves `/metrics` on `listener` until the daemon shuts down.
pub fn start(svc: Arc<Service>, listener: Listener) -> std::io::Result<()> {
    listener.set_nonblocking()?;
    std::thread::Builder::new()
        .name("onnxc-metrics".into())
        .spawn(move || {
            while !svc.shutting_down() {
                if !matches!(listener.wait_pending(Duration::from_millis(100)), Ok(true)) {
                    continue;
                }
                if let Ok(stream) = listener.accept() {
                    let _ = answer(&svc, stream);
                }
            }
            listener.remove();
        })?;
    Ok(())
}

/// Reads one request head (bounded in size and time) and answers it.
fn answer(svc: &Service, mut stream: Stream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(chunk.get(..n).unwrap_or(&[]));
    }
    let first = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let (status, body) = match first.starts_with(b"GET /metrics ") {
        true => ("200 OK", render(&svc.stats())),
        false => ("404 Not Found", "only GET /metrics\n".to_string()),
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(reply.as_bytes())
}

/// One metric family: HELP, TYPE, then `name{labels} value` lines.
fn family(out: &mut String, name: &str, kind: &str, help: &str, samples: &[(&str, f64)]) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    for (labels, v) in samples {
        let _ = writeln!(out, "{name}{labels} {v}");
    }
}

/// The text exposition of `stats` (the same counters `stats` reports).
pub fn render(stats: &Value) -> String {
    let n = |v: &Value| v.as_f64().unwrap_or(0.0);
    let mut out = String::new();
    let requests: Vec<(&str, f64)> = [
        ("{status=\"ok\"}", "ok"),
        ("{status=\"error\"}", "errors"),
        ("{status=\"busy\"}", "busy"),
        ("{status=\"timeout\"}", "timeouts"),
    ]
    .iter()
    .map(|(l, k)| (*l, n(&stats[*k])))
    .collect();
    family(
        &mut out,
        "onnxc_requests_total",
        "counter",
        "Requests answered, by outcome.",
        &requests,
    );
    let shared = &stats["shared"];
    let hits = [
        ("{tier=\"local\"}", n(&stats["cache"]["hits"])),
        ("{tier=\"shared\"}", n(&shared["hits"])),
        ("{tier=\"joined\"}", n(&stats["joined"])),
    ];
    family(
        &mut out,
        "onnxc_cache_hits_total",
        "counter",
        "Requests answered from a cache tier or by joining a compile in flight.",
        &hits,
    );
    family(
        &mut out,
        "onnxc_compiles_total",
        "counter",
        "Compiles run.",
        &[("", n(&stats["compiles"]))],
    );
    family(
        &mut out,
        "onnxc_queue_depth",
        "gauge",
        "Compiles waiting for a worker.",
        &[("", n(&stats["pool"]["queued"]))],
    );
    family(
        &mut out,
        "onnxc_compiles_running",
        "gauge",
        "Compiles running.",
        &[("", n(&stats["pool"]["running"]))],
    );
    family(
        &mut out,
        "onnxc_auth_failures_total",
        "counter",
        "Requests with a missing or wrong token.",
        &[("", n(&stats["unauthorized"]))],
    );
    if shared.is_object() {
        let up = if shared["up"] == true { 1.0 } else { 0.0 };
        family(
            &mut out,
            "onnxc_shared_up",
            "gauge",
            "The shared cache tier is reachable.",
            &[("", up)],
        );
        family(
            &mut out,
            "onnxc_shared_forged_total",
            "counter",
            "Shared entries refused by the fleet secret.",
            &[("", n(&shared["forged"]))],
        );
        family(
            &mut out,
            "onnxc_shared_outages_total",
            "counter",
            "Times the shared tier was marked down.",
            &[("", n(&shared["outages"]))],
        );
    }
    histogram(&mut out, &stats["compile_seconds"]);
    out
}

/// `onnxc_compile_seconds` from the `compile_seconds` stats entry.
fn histogram(out: &mut String, h: &Value) {
    let name = "onnxc_compile_seconds";
    let _ = writeln!(
        out,
        "# HELP {name} Wall time of compiles.\n# TYPE {name} histogram"
    );
    let counts: Vec<f64> = h["counts"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect())
        .unwrap_or_default();
    let mut cumulative = 0.0;
    for (i, c) in counts.iter().enumerate() {
        cumulative += c;
        let le = COMPILE_BUCKETS
            .get(i)
            .map_or_else(|| "+Inf".to_string(), |b| b.to_string());
        let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {cumulative}");
    }
    let _ = writeln!(out, "{name}_sum {}", h["sum"].as_f64().unwrap_or(0.0));
    let _ = writeln!(out, "{name}_count {cumulative}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exposition_is_well_formed() {
        let h = Histogram::default();
        for s in [0.01, 0.3, 0.3, 100.0] {
            h.record(s);
        }
        let (counts, sum) = h.snapshot();
        let stats = json!({
            "ok": 3, "errors": 1, "busy": 0, "timeouts": 0, "compiles": 4, "joined": 1,
            "unauthorized": 2, "cache": {"hits": 5}, "pool": {"queued": 1, "running": 1},
            "shared": {"up": true, "hits": 2, "forged": 0, "outages": 0},
            "compile_seconds": {"counts": counts, "sum": sum},
        });
        let text = render(&stats);
        for line in [
            "onnxc_requests_total{status=\"ok\"} 3",
            "onnxc_cache_hits_total{tier=\"local\"} 5",
            "onnxc_shared_up 1",
            "onnxc_compile_seconds_bucket{le=\"0.05\"} 1",
            "onnxc_compile_seconds_bucket{le=\"0.5\"} 3",
            "onnxc_compile_seconds_bucket{le=\"+Inf\"} 4",
            "onnxc_compile_seconds_count 4",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        // Every sample line: a name, optional labels, one number.
        for l in text.lines().filter(|l| !l.starts_with('#')) {
            let (_, v) = l.rsplit_once(' ').unwrap();
            assert!(v.parse::<f64>().is_ok(), "{l}");
        }
    }
}
