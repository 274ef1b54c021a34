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

/// Two daemons sharing one Redis, each with two clients, over the same
/// 64 models: every model is compiled once in the fleet; the other
/// daemon's requests for it are `joined` (asked while the first compiles)
/// or Redis hits, and repeats are memory hits (docs/BENCHMARKS.md).
#[test]
#[ignore = "benchmark: run on a release build with --ignored --nocapture"]
fn two_daemons_sharing_redis() {
    let dir = workdir("bench-redis");
    let n_models = 64u64;
    for i in 0..n_models {
        gen(&dir, "cnn", 7000 + i, &format!("c{i}.onnx"));
    }
    let redis = Redis::start(&dir);
    let url = redis.url();
    let daemons = [
        Daemon::start_named(&dir, "a", &["--cache", &url, "--workers", "1"]),
        Daemon::start_named(&dir, "b", &["--cache", &url, "--workers", "1"]),
    ];
    let per_client = 256usize;
    let start = Instant::now();
    let results: Vec<(usize, Vec<(String, Duration)>)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|t| {
                let d = &daemons[t % 2];
                s.spawn(move || {
                    let mut c = Conn::unix(&d.socket);
                    let out = (0..per_client)
                        .map(|n| {
                            // Clients 0 (on A) and 1 (on B) walk the models
                            // in the same order, as do 2 and 3 from another
                            // offset: each cold model is asked of both
                            // daemons at about the same time.
                            let m = (n as u64 + 32 * (t / 2) as u64) % n_models;
                            let r0 = Instant::now();
                            let r = c.call(&json!({"id": n, "op": "compile", "model_path": format!("c{m}.onnx"), "emit": "llvm"}));
                            assert_eq!(r["status"], "ok", "{r:.300}");
                            (r["cache"].as_str().unwrap().to_string(), r0.elapsed())
                        })
                        .collect();
                    (t % 2, out)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let secs = start.elapsed().as_secs_f64();
    println!("| daemon | requests | miss | hit | joined | p50 ms | p99 ms |");
    println!("|---|---|---|---|---|---|---|");
    for (i, name) in ["A", "B"].iter().enumerate() {
        let mut lat: Vec<Duration> = Vec::new();
        let mut count = std::collections::BTreeMap::new();
        for (_, rs) in results.iter().filter(|r| r.0 == i) {
            for (cache, l) in rs {
                *count.entry(cache.clone()).or_insert(0) += 1;
                lat.push(*l);
            }
        }
        lat.sort();
        let get = |k: &str| count.get(k).copied().unwrap_or(0);
        println!(
            "| {name} | {} | {} | {} | {} | {:.2} | {:.2} |",
            lat.len(),
            get("miss"),
            get("hit"),
            get("joined"),
            pct(&lat, 0.5),
            pct(&lat, 0.99)
        );
    }
    let total = 4 * per_client;
    println!(
        "{total} requests in {secs:.2} s: {:.0} req/s",
        total as f64 / secs
    );
    for d in &daemons {
        let s = d.stats();
        println!(
            "{}: compiles {}, shared {}",
            d.addr, s["compiles"], s["shared"]
        );
    }
}

/// CPU time of all threads of a process so far (/proc/PID/task/*/schedstat,
/// nanoseconds on CPU): unlike wall time, not stretched by other load.
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// How long after its deadline a cancelled compile frees its worker
/// (release build; the default suite checks the debug build in
/// cli/tests/daemon_cancel.rs): wall time, and the daemon's CPU time in
/// that window (what the wall time would be on an idle machine).
#[test]
#[ignore = "benchmark: run on a release build with --ignored --nocapture"]
fn cancellation_latency() {
    let dir = workdir("bench-cancel");
    gen_once(&dir, "chain-50000", "slow.onnx");
    let d = Daemon::start(&dir, &["--workers", "1"]);
    let (mut worst, mut worst_cpu) = (Duration::ZERO, 0u64);
    // Within the compile (about 1.45 s in a release build since session
    // 21; deadlines past it would find the artifact done).
    let deadlines = [
        100u64, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200,
    ];
    for (n, deadline) in deadlines.into_iter().enumerate() {
        let r = d.connect().call(
            &json!({"id": n, "op": "compile", "model_path": "slow.onnx", "timeout_ms": deadline}),
        );
        let (t, cpu0) = (Instant::now(), cpu_ns(d.pid()));
        assert_eq!(r["status"], "timeout", "{r:.300}");
        while d.stats()["pool"]["running"] != 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (l, cpu) = (t.elapsed(), cpu_ns(d.pid()).saturating_sub(cpu0));
        worst = worst.max(l);
        worst_cpu = worst_cpu.max(cpu);
        println!(
            "deadline {deadline} ms: worker free after {:.1} ms (daemon CPU {:.1} ms)",
            l.as_secs_f64() * 1e3,
            cpu as f64 / 1e6
        );
    }
    println!(
        "worst {:.1} ms, CPU {:.1} ms",
        worst.as_secs_f64() * 1e3,
        worst_cpu as f64 / 1e6
    );
}

/// User + system CPU seconds and minor page faults of a process so far
/// (/proc/PID/stat fields 14, 15 and 10, after the command name).
fn cpu_and_faults(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    // f[0] is field 3 (state).
    let num = |i: usize| f[i - 3].parse::<u64>().unwrap();
    let ticks = 100.0; // USER_HZ on Linux
    ((num(14) + num(15)) as f64 / ticks, num(10))
}

/// Thin clients: the model sent inline (base64) and the artifact returned
/// inline, all hits; the daemon's CPU time and page faults per request
/// show what the per-request scratch costs (docs/BENCHMARKS.md, bumpalo).
#[test]
#[ignore = "benchmark: run on a release build with --ignored --nocapture"]
fn inline_hits() {
    let dir = workdir("bench-inline");
    let models: Vec<String> = (0..8u64)
        .map(|i| b64(&std::fs::read(gen(&dir, "cnn", 9100 + i, &format!("c{i}.onnx"))).unwrap()))
        .collect();
    let d = Daemon::start(&dir, &[]);
    println!("| scenario | clients | requests | req/s | p50 ms | p99 ms | daemon CPU µs/req | page faults/req |");
    println!("|---|---|---|---|---|---|---|---|");
    for emit in ["llvm", "obj"] {
        let req = |n: usize| json!({"id": n, "op": "compile", "model_base64": models[n % 8], "emit": emit});
        for i in 0..8 {
            assert_eq!(d.connect().call(&req(i))["status"], "ok");
        }
        for clients in [1, 2] {
            let per = 2000 / clients;
            let (cpu0, pf0) = cpu_and_faults(d.pid());
            let (rps, lat) = load(&d, clients, per, req);
            let (cpu1, pf1) = cpu_and_faults(d.pid());
            let n = lat.len() as f64;
            println!(
                "| hit, inline cnn → {emit} | {clients} | {} | {rps:.0} | {:.2} | {:.2} | {:.0} | {:.1} |",
                lat.len(),
                pct(&lat, 0.5),
                pct(&lat, 0.99),
                (cpu1 - cpu0) / n * 1e6,
                (pf1 - pf0) as f64 / n
            );
        }
    }
    let s = d.stats();
    println!("RSS: {:.1} MiB", rss_bytes(&s) as f64 / 1048576.0);
}
