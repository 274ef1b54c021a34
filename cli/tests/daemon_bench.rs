#![allow(clippy::expect_used, clippy::unwrap_used)]
//! Daemon throughput and latency (figures in docs/BENCHMARKS.md). Not a
//! correctness test; run it on a release build:
//!   cargo test --release -p onnxc --test daemon_bench -- --ignored --nocapture

mod daemon_common;
use daemon_common::*;
use serde_json::json;
use std::time::{Duration, Instant};

/// `clients` threads send `per_client` requests each; returns req/s and
/// the sorted client-side latencies.
fn load(
    d: &Daemon,
    clients: usize,
    per_client: usize,
    req: impl Fn(usize) -> serde_json::Value + Sync,
) -> (f64, Vec<Duration>) {
    let start = Instant::now();
    let mut lat: Vec<Duration> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..clients)
            .map(|t| {
                let (socket, req) = (&d.socket, &req);
                s.spawn(move || {
                    let mut c = Conn::unix(socket);
                    (0..per_client)
                        .map(|n| {
                            let r0 = Instant::now();
                            let r = c.call(&req(t * per_client + n));
                            assert_eq!(r["status"], "ok", "{r:.300}");
                            r0.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let secs = start.elapsed().as_secs_f64();
    lat.sort();
    (lat.len() as f64 / secs, lat)
}

fn pct(lat: &[Duration], p: f64) -> f64 {
    let i = ((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1;
    lat[i].as_secs_f64() * 1e3
}

#[test]
#[ignore = "benchmark: run on a release build with --ignored --nocapture"]
fn daemon_throughput() {
    let dir = workdir("bench");
    let n_models = 64u64;
    for i in 0..n_models {
        gen(&dir, "mlp", 9000 + i, &format!("m{i}.onnx"));
        gen(&dir, "cnn", 9000 + i, &format!("c{i}.onnx"));
    }
    println!("| scenario | clients | requests | req/s | p50 ms | p99 ms |");
    println!("|---|---|---|---|---|---|");
    let row = |name: &str, clients: usize, (rps, lat): (f64, Vec<Duration>)| {
        println!(
            "| {name} | {clients} | {} | {rps:.0} | {:.2} | {:.2} |",
            lat.len(),
            pct(&lat, 0.5),
            pct(&lat, 0.99)
        );
    };
    // Misses: a cache too small for any artifact, so every request compiles.
    let d = Daemon::start(&dir, &["--cache-bytes", "1"]);
    for (prefix, model, emit) in [
        ("m", "mlp", "memref"),
        ("m", "mlp", "llvm"),
        ("c", "cnn", "llvm"),
    ] {
        for clients in [1, 2] {
            let per = 200 / clients;
            let r = load(
                &d,
                clients,
                per,
                |n| json!({"id": n, "op": "compile", "model_path": format!("{prefix}{}.onnx", n as u64 % n_models), "emit": emit}),
            );
            row(&format!("miss: {model} → {emit}"), clients, r);
        }
    }
    drop(d);
    // Hits: the same artifacts, warmed.
    let d = Daemon::start(&dir, &[]);
    for (prefix, model, emit) in [
        ("m", "mlp", "memref"),
        ("m", "mlp", "llvm"),
        ("c", "cnn", "llvm"),
    ] {
        for i in 0..8 {
            d.connect().call(&json!({"id": 0, "op": "compile", "model_path": format!("{prefix}{i}.onnx"), "emit": emit}));
        }
        for clients in [1, 4] {
            let per = 2000 / clients;
            let r = load(
                &d,
                clients,
                per,
                |n| json!({"id": n, "op": "compile", "model_path": format!("{prefix}{}.onnx", n % 8), "emit": emit}),
            );
            row(&format!("hit: {model} → {emit}"), clients, r);
        }
    }
    let r = load(&d, 4, 5000, |n| json!({"id": n, "op": "health"}));
    row("health", 4, r);
    let s = d.stats();
    println!(
        "RSS after the hit runs: {:.1} MiB",
        rss_bytes(&s) as f64 / 1048576.0
    );
}
