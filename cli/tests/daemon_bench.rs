#![allow(clippy::expect_used, clippy::unwrap_used)]
//! Daemon throughput and latency (figures in docs/BENCHMARKS.md). Not a
//! correctness test; run it on a release build:
//!   cargo test --release -p onnxc --test daemon_bench -- --ignored --nocapture

use serde_json::json;
use std::time::{Duration, Instant};
use testsuite::daemon::*;

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

/// The fleet under attack and faults (docs/BENCHMARKS.md, issue 31): a
/// token holder's `health` during floods from 64 addresses, RSS under
/// tokenless partial lines, wrong-token tries, SIGTERM beside a client
/// that never reads, and a request's time with Redis hung or full.
#[test]
#[ignore = "benchmark: run on a release build with --ignored --nocapture"]
fn fleet_faults() {
    use std::io::Write;
    let dir = workdir("bench-fleet");
    let token = "7e6d5c4b3a2918077e6d5c4b3a291807";
    let file = secret_file(&dir, "token", token);
    let flags = ["--auth-token-file", file.as_str(), "--write-timeout", "2"];
    let mut d = Daemon::start_at(&dir, "tcp:127.0.0.1:0", &flags).unwrap();
    let addr = d.addr.strip_prefix("tcp:").unwrap().to_string();
    let to: std::net::SocketAddrV4 = addr.parse().unwrap();
    let stats =
        || call_with_token(&addr, token, "stats", Duration::from_secs(5)).0["stats"].clone();
    println!("| fault | figure |\n|---|---|");
    for (name, drip) in [("idle", None), ("1 byte/s", Some(Duration::from_secs(1)))] {
        let flood = Flood::start(to, 64, drip);
        std::thread::sleep(Duration::from_millis(500));
        let mut lat = Vec::new();
        let mut worst_tries = 0;
        for _ in 0..20 {
            let (r, took, tries) = call_with_token(&addr, token, "health", Duration::from_secs(2));
            assert_eq!(r["status"], "ok", "{r}");
            lat.push(took);
            worst_tries = worst_tries.max(tries);
        }
        let made = flood.stop();
        lat.sort();
        println!(
            "| 64 addresses, {name} tokenless connections ({made} made) | token holder's `health` p50 {:.1} ms, max {:.1} ms, at most {worst_tries} tries |",
            pct(&lat, 0.5),
            pct(&lat, 1.0)
        );
    }
    let rss0 = rss_bytes(&stats());
    let pushers: Vec<_> = (0..4)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut s = std::net::TcpStream::connect(&addr).unwrap();
                let chunk = vec![b'x'; 1 << 20];
                let (t, mut sent) = (Instant::now(), 0u64);
                while sent < 330 << 20 && s.write_all(&chunk).is_ok() {
                    sent += chunk.len() as u64;
                }
                (sent, t.elapsed())
            })
        })
        .collect();
    let mut peak = rss0;
    while pushers.iter().any(|p| !p.is_finished()) {
        peak = peak.max(rss_bytes(&stats()));
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent: u64 = pushers.into_iter().map(|p| p.join().unwrap().0).sum();
    println!(
        "| 4 tokenless clients, one 330 MiB line each ({} MiB sent) | RSS {:.1} → peak {:.1} MiB |",
        sent >> 20,
        rss0 as f64 / 1048576.0,
        peak as f64 / 1048576.0
    );
    let t = Instant::now();
    let mut tries = 0u32;
    while t.elapsed() < Duration::from_secs(2) {
        let (r, _, _) = call_with_token(
            &addr,
            "not-the-token-not-the-token-0000",
            "stats",
            Duration::from_secs(1),
        );
        assert_eq!(r["error"], "unauthorized");
        tries += 1;
    }
    println!(
        "| wrong tokens, one client for 2 s | {:.0} tries/s, `unauthorized` counted {}, logged at most once a second |",
        f64::from(tries) / 2.0,
        stats()["unauthorized"]
    );
    let mut greedy = std::net::TcpStream::connect(&addr).unwrap();
    // Until its writes block: the daemon's replies fill both buffers.
    greedy
        .set_write_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let req = format!(
        "{{\"op\":\"auth\",\"token\":\"{token}\"}}\n{{\"op\":\"stats\",\"token\":\"{token}\"}}\n"
    );
    let mut pipelined = 0;
    while pipelined < 300_000 && greedy.write_all(req.as_bytes()).is_ok() {
        pipelined += 1;
    }
    let t = Instant::now();
    d.signal("TERM");
    assert!(d.wait(Duration::from_secs(30)).success());
    println!(
        "| SIGTERM beside a client that pipelined {pipelined} requests and never reads (`--write-timeout 2`) | exit after {:.2} s |",
        t.elapsed().as_secs_f64()
    );
    redis_faults(&dir);
}

/// A request's time with Redis hung (SIGSTOP) and full (`maxmemory`,
/// `noeviction`), and whether two daemons still compile a model once.
fn redis_faults(dir: &std::path::Path) {
    let redis = Redis::start(dir);
    let url = redis.url();
    for i in 0..4u64 {
        gen(dir, "mlp", 300 + i, &format!("r{i}.onnx"));
    }
    let a = Daemon::start_named(dir, "ra", &["--cache", &url]);
    let b = Daemon::start_named(dir, "rb", &["--cache", &url]);
    let timed = |d: &Daemon, file: &str| {
        let t = Instant::now();
        let r = d
            .connect()
            .call(&json!({"op": "compile", "model_path": file, "emit": "memref"}));
        assert_eq!(r["status"], "ok", "{r:.300}");
        (
            t.elapsed().as_secs_f64() * 1e3,
            r["cache"].as_str().unwrap_or("").to_string(),
        )
    };
    let (healthy, _) = timed(&a, "r0.onnx");
    redis.signal("STOP");
    let (first, _) = timed(&a, "r1.onnx");
    let (next, _) = timed(&a, "r2.onnx");
    redis.signal("CONT");
    println!("| Redis hung (SIGSTOP) | a miss: {healthy:.0} ms healthy; {first:.0} ms the first, {next:.0} ms the next (tier marked down) |");
    for (k, v) in [("maxmemory-policy", "noeviction"), ("maxmemory", "1")] {
        redis.cmd(&["CONFIG", "SET", k, v]);
    }
    std::thread::sleep(Duration::from_secs(6)); // past the down tier's backoff
    gen_once(dir, "chain-50000", "slow.onnx");
    let on_a = std::thread::spawn({
        let socket = a.socket.clone();
        move || {
            let t = Instant::now();
            let r = Conn::unix(&socket)
                .call(&json!({"op": "compile", "model_path": "slow.onnx", "emit": "memref"}));
            (t.elapsed().as_secs_f64() * 1e3, r["cache"].clone())
        }
    });
    a.wait_stats("A locks", Duration::from_secs(30), |s| {
        s["shared"]["locks_held"] == 1
    });
    let (on_b, cache) = timed(&b, "slow.onnx");
    let (on_a, cache_a) = on_a.join().unwrap();
    let (sa, sb) = (a.stats(), b.stats());
    println!(
        "| Redis full (`noeviction`), one model asked of two daemons | A {cache_a} {on_a:.0} ms, B {cache} {on_b:.0} ms; compiles A {} B {}; A's tier up: {}, writes refused {}, handed over {} |",
        sa["compiles"], sb["compiles"], sa["shared"]["up"], sa["shared"]["refused"], sa["shared"]["handoffs"]
    );
}
