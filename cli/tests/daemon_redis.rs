#![allow(clippy::expect_used, clippy::unwrap_used)]
//! Two daemons sharing one Redis (`--cache redis://...`): a hit across
//! daemons, `joined` across daemons, Redis killed mid-run and restarted
//! (every request still served), and a daemon SIGKILLed while holding a
//! compile lock (the other compiles once the lock expires). Each test
//! starts its own redis-server on a free loopback port.

mod daemon_common;
use daemon_common::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A model whose compile takes long enough (seconds in a debug build) to
/// be caught in flight.
const SLOW: &str = "chain-12000";

fn compile(d: &Daemon, file: &str) -> Value {
    d.connect()
        .call(&json!({"id": file, "op": "compile", "model_path": file, "emit": "memref"}))
}

fn shared(d: &Daemon) -> Value {
    d.stats()["shared"].clone()
}

#[test]
fn hit_and_joined_across_daemons() {
    let dir = workdir("redis-share");
    let redis = Redis::start(&dir);
    let url = redis.url();
    let m = gen(&dir, "cnn", 5, "m.onnx");
    gen_once(&dir, SLOW, "slow.onnx");
    let a = Daemon::start_named(&dir, "a", &["--cache", &url]);
    let b = Daemon::start_named(&dir, "b", &["--cache", &url]);

    // A compiles and stores; B finds it in Redis.
    let ra = compile(&a, "m.onnx");
    assert_eq!(ra["status"], "ok", "{ra:.300}");
    assert_eq!(ra["cache"], "miss");
    let rb = compile(&b, "m.onnx");
    assert_eq!(rb["status"], "ok", "{rb:.300}");
    assert_eq!(rb["cache"], "hit", "{rb:.300}");
    assert!(artifact(&rb) == artifact(&ra) && artifact(&ra) == reference(&m, "memref"));
    assert_eq!(b.stats()["compiles"], 0);
    // The entry is in Redis under its content address (checked with redis-cli).
    let key = ra["key"].as_str().unwrap();
    let ttl: i64 = redis
        .cmd(&["PTTL", &format!("onnxc:a:{key}")])
        .unwrap()
        .parse()
        .unwrap();
    assert!(ttl > 0, "stored with a TTL: {ttl}");

    // A slow compile on A; the same request on B while A holds the lock:
    // B waits for A's artifact and answers `joined`, compiling nothing.
    let a_req = std::thread::spawn({
        let socket = a.socket.clone();
        move || {
            Conn::unix(&socket).call(
                &json!({"id": "a", "op": "compile", "model_path": "slow.onnx", "emit": "memref"}),
            )
        }
    });
    a.wait_stats("A holds the lock", Duration::from_secs(30), |s| {
        s["shared"]["locks_held"] == 1
    });
    let rb = compile(&b, "slow.onnx");
    let ra = a_req.join().unwrap();
    assert_eq!(ra["status"], "ok", "{ra:.300}");
    assert_eq!(ra["cache"], "miss");
    assert_eq!(rb["status"], "ok", "{rb:.300}");
    assert_eq!(rb["cache"], "joined", "{rb:.300}");
    assert!(artifact(&rb) == artifact(&ra));
    let sb = b.stats();
    assert_eq!(sb["compiles"], 0, "{sb}");
    assert_eq!(sb["shared"]["lock_waits"], 1, "{sb}");
    assert_eq!(shared(&a)["locks_held"], 0, "the lock is released");
}

#[test]
fn redis_outage_is_served_locally_then_reconnected() {
    let dir = workdir("redis-outage");
    let mut redis = Redis::start(&dir);
    let (url, port) = (redis.url(), redis.port);
    for i in 0..4u64 {
        gen(&dir, "mlp", 70 + i, &format!("m{i}.onnx"));
    }
    let a = Daemon::start_named(&dir, "a", &["--cache", &url]);
    assert_eq!(compile(&a, "m0.onnx")["cache"], "miss");
    assert_eq!(shared(&a)["puts"], 1);

    redis.kill();
    // A hit from memory and a local compile: both served, quickly.
    let t = Instant::now();
    let r = compile(&a, "m0.onnx");
    assert_eq!(
        (r["status"].as_str(), r["cache"].as_str()),
        (Some("ok"), Some("hit"))
    );
    let r = compile(&a, "m1.onnx");
    assert_eq!(r["status"], "ok", "{r:.300}");
    assert_eq!(r["cache"], "miss");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    let s = shared(&a);
    assert_eq!(
        (s["up"].as_bool(), s["outages"].as_u64()),
        (Some(false), Some(1)),
        "{s}"
    );

    // Back on the same port (empty): the daemon reconnects by itself
    // within its backoff, and stores again.
    let redis = Redis::start_on(&dir, port);
    let start = Instant::now();
    let mut n = 0;
    while shared(&a)["up"] != true {
        let r = compile(&a, &format!("m{}.onnx", 2 + n % 2));
        assert_eq!(r["status"], "ok", "{r:.300}");
        n += 1;
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never reconnected"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let r = compile(&a, "m1.onnx");
    assert_eq!(r["cache"], "hit", "from memory");
    assert_eq!(compile(&a, "m3.onnx")["status"], "ok");
    // A new daemon finds what A stored after the restart.
    let b = Daemon::start_named(&dir, "b", &["--cache", &url]);
    let r = compile(&b, "m3.onnx");
    assert_eq!(r["cache"], "hit", "{r:.300}");
    assert_eq!(shared(&a)["outages"], 1, "logged once: one outage");
    let s = a.stats();
    assert_eq!(s["errors"], 0, "no failed request: {s}");
    drop(redis);
}

#[test]
fn a_dead_holders_lock_expires_and_another_daemon_compiles() {
    let dir = workdir("redis-sigkill");
    let redis = Redis::start(&dir);
    let url = redis.url();
    gen_once(&dir, SLOW, "slow.onnx");
    let lock = ["--cache", &url, "--cache-lock-ms", "1500"];
    let mut a = Daemon::start_named(&dir, "a", &lock);
    let b = Daemon::start_named(&dir, "b", &lock);
    let pending = std::thread::spawn({
        let socket = a.socket.clone();
        move || {
            try_call(
                &socket,
                &json!({"id": "a", "op": "compile", "model_path": "slow.onnx", "emit": "memref"}),
            )
        }
    });
    a.wait_stats("A holds the lock", Duration::from_secs(30), |s| {
        s["shared"]["locks_held"] == 1
    });
    a.signal("KILL");
    a.wait(Duration::from_secs(10));
    assert!(
        pending.join().unwrap().is_none(),
        "A died without answering"
    );
    let locks = redis.cmd(&["KEYS", "onnxc:l:*"]).unwrap();
    assert!(!locks.is_empty(), "A's lock outlives it");
    let t = Instant::now();
    let r = compile(&b, "slow.onnx");
    assert_eq!(r["status"], "ok", "{r:.300}");
    assert_eq!(r["cache"], "miss", "B compiled it: {r:.300}");
    let s = shared(&b);
    assert_eq!(
        (s["lock_waits"].as_u64(), s["takeovers"].as_u64()),
        (Some(1), Some(1)),
        "{s}"
    );
    eprintln!(
        "B took over after {:.2} s (lock 1.5 s)",
        t.elapsed().as_secs_f64()
    );
    assert_eq!(
        redis.cmd(&["KEYS", "onnxc:l:*"]).unwrap(),
        "",
        "no lock left"
    );
    // Stored for everyone.
    let c = Daemon::start_named(&dir, "c", &["--cache", &url]);
    assert_eq!(compile(&c, "slow.onnx")["cache"], "hit");
}
