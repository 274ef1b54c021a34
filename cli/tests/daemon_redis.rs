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

/// `--cache-max-entry`: larger artifacts are not stored, and a larger value
/// found under a key (another writer's) is not read; corrupt values are
/// deleted and recompiled.
#[test]
fn entries_are_bounded_and_verified() {
    let dir = workdir("redis-bounds");
    let redis = Redis::start(&dir);
    let url = redis.url();
    gen(&dir, "mlp", 3, "m.onnx");
    let small = Daemon::start_named(&dir, "a", &["--cache", &url, "--cache-max-entry", "1K"]);
    let r = compile(&small, "m.onnx");
    assert_eq!(r["status"], "ok", "{r:.300}");
    let key = format!("onnxc:a:{}", r["key"].as_str().unwrap());
    let s = shared(&small);
    assert_eq!(
        (s["puts"].as_u64(), s["too_large"].as_u64()),
        (Some(0), Some(1)),
        "{s}"
    );
    assert_eq!(redis.cmd(&["EXISTS", &key]).as_deref(), Some("0"));
    // Stored by a daemon with the default bound, then skipped by a
    // daemon with a small one: not read, compiled.
    let big = Daemon::start_named(&dir, "b", &["--cache", &url]);
    assert_eq!(compile(&big, "m.onnx")["cache"], "miss");
    assert_eq!(redis.cmd(&["EXISTS", &key]).as_deref(), Some("1"));
    let small2 = Daemon::start_named(&dir, "c", &["--cache", &url, "--cache-max-entry", "1K"]);
    assert_eq!(compile(&small2, "m.onnx")["cache"], "miss");
    // Skipped twice on reading (before and after taking the lock), and
    // its own artifact not stored.
    let s = shared(&small2);
    assert_eq!(
        (s["too_large"].as_u64(), s["puts"].as_u64()),
        (Some(3), Some(0)),
        "{s}"
    );
    // A foreign value under the key: corrupt, deleted, recompiled.
    assert_eq!(
        redis.cmd(&["SET", &key, "not an artifact"]).as_deref(),
        Some("OK")
    );
    let d = Daemon::start_named(&dir, "d", &["--cache", &url]);
    let r = compile(&d, "m.onnx");
    assert_eq!(
        (r["status"].as_str(), r["cache"].as_str()),
        (Some("ok"), Some("miss"))
    );
    assert_eq!(shared(&d)["corrupt"], 1);
    // ... and stored again, verified by the next daemon.
    let e = Daemon::start_named(&dir, "e", &["--cache", &url]);
    assert_eq!(compile(&e, "m.onnx")["cache"], "hit");
}
