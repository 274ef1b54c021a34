#![allow(clippy::expect_used, clippy::unwrap_used)]
//! Two daemons sharing one Redis (`--cache redis://...`): a hit across
//! daemons, `joined` across daemons, Redis killed mid-run and restarted
//! (every request still served), and a daemon SIGKILLed while holding a
//! compile lock (the other compiles once the lock expires), entries signed
//! under a fleet secret (forgeries refused), and the rule that a remote
//! Redis needs a secret. Each test starts its own redis-server on a free
//! loopback port.

use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use testsuite::daemon::*;

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

/// Compiles `file` on A (started with the test hook `hold`) and, while
/// A's compile holds its lock, on B; A's compile waits until B waits.
fn compile_on_both(a: &Daemon, b: &Daemon, hold: &Path, file: &str) -> (Value, Value) {
    std::fs::write(hold, b"").unwrap();
    let request = |d: &Daemon| {
        let socket = d.socket.clone();
        let file = file.to_string();
        std::thread::spawn(move || {
            Conn::unix(&socket)
                .call(&json!({"id": file, "op": "compile", "model_path": file, "emit": "memref"}))
        })
    };
    let ra = request(a);
    a.wait_stats("A holds the lock", Duration::from_secs(30), |s| {
        s["shared"]["locks_held"] == 1
    });
    let rb = request(b);
    b.wait_stats("B waits", Duration::from_secs(30), |s| {
        s["shared"]["lock_waits"] == 1
    });
    std::fs::remove_file(hold).unwrap();
    (ra.join().unwrap(), rb.join().unwrap())
}

#[test]
fn hit_and_joined_across_daemons() {
    let dir = workdir("redis-share");
    let redis = Redis::start(&dir);
    let url = redis.url();
    let m = gen(&dir, "cnn", 5, "m.onnx");
    let hold = dir.join("hold");
    let a = Daemon::start_named_holding(&dir, "a", &["--cache", &url], &hold);
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

    // A compile on A; the same request on B while A holds the lock:
    // B waits for A's artifact and answers `joined`, compiling nothing.
    gen(&dir, "cnn", 6, "j.onnx");
    let (ra, rb) = compile_on_both(&a, &b, &hold, "j.onnx");
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
    let health =
        |d: &Daemon| d.connect().call(&json!({"id": "h", "op": "health"}))["stats"].clone();
    assert_eq!(
        health(&a)["degraded"],
        json!(["shared cache tier unreachable"])
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
    assert_eq!(health(&a)["degraded"], json!([]));
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

/// With `--cache-key-file`, whoever can write to Redis cannot choose what
/// a daemon serves: an entry re-hashed without the secret, and another
/// model's valid entry moved under this key, are refused, deleted and
/// counted; the daemon compiles and serves the right artifact, and stores
/// a signed one the next daemon serves.
#[test]
fn forged_entries_are_refused() {
    use sha2::{Digest, Sha256};
    let dir = workdir("redis-forged");
    let redis = Redis::start(&dir);
    let url = redis.url();
    gen(&dir, "mlp", 3, "m.onnx");
    gen(&dir, "mlp", 4, "n.onnx");
    let want = reference(&dir.join("m.onnx"), "memref");
    let key_file = secret_file(&dir, "fleet.key", "0123456789abcdef-fleet-secret");
    let signed = [
        "--cache",
        url.as_str(),
        "--cache-key-file",
        key_file.as_str(),
    ];
    let a = Daemon::start_named(&dir, "a", &signed);
    let (rm, rn) = (compile(&a, "m.onnx"), compile(&a, "n.onnx"));
    let key_of = |r: &Value| format!("onnxc:a:{}", r["key"].as_str().unwrap());
    let (km, kn) = (key_of(&rm), key_of(&rn));
    let mut c = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let get = |c: &mut redis::Connection, k: &str| -> Vec<u8> {
        redis::cmd("GET").arg(k).query(c).unwrap()
    };
    let evil = artifact(&rn);
    let mut plain = b"ONNXC-SHARE1\n".to_vec();
    plain.extend_from_slice(&Sha256::digest(&evil));
    plain.extend_from_slice(&evil);
    let moved = get(&mut c, &kn);
    for (i, forgery) in [plain, moved].into_iter().enumerate() {
        let _: () = redis::cmd("SET")
            .arg(&km)
            .arg(forgery)
            .query(&mut c)
            .unwrap();
        let b = Daemon::start_named(&dir, &format!("b{i}"), &signed);
        let r = compile(&b, "m.onnx");
        assert_eq!(
            (r["status"].as_str(), r["cache"].as_str()),
            (Some("ok"), Some("miss")),
            "{r:.300}"
        );
        assert!(artifact(&r) == want, "forgery {i} served");
        let s = shared(&b);
        assert_eq!(
            (s["forged"].as_u64(), s["hits"].as_u64()),
            (Some(1), Some(0)),
            "{s}"
        );
    }
    // The last daemon stored a signed entry again: served by the next one.
    let e = Daemon::start_named(&dir, "e", &signed);
    let r = compile(&e, "m.onnx");
    assert_eq!(r["cache"], "hit", "{r:.300}");
    assert!(artifact(&r) == want);
    // A daemon without the secret cannot check signed entries: it neither
    // serves nor deletes them (read before and after taking the lock).
    let plain_daemon = Daemon::start_named(&dir, "p", &["--cache", &url]);
    assert_eq!(compile(&plain_daemon, "m.onnx")["cache"], "miss");
    let s = shared(&plain_daemon);
    assert_eq!(
        (s["unverifiable"].as_u64(), s["corrupt"].as_u64()),
        (Some(2), Some(0)),
        "{s}"
    );
}

/// A Redis that is not on loopback needs --cache-key-file or an explicit
/// --trust-shared-cache; a secret file open to others is refused.
#[test]
fn a_remote_redis_needs_a_secret() {
    let dir = workdir("redis-remote");
    let sock = format!("unix:{}", dir.join("x.sock").display());
    let remote = "redis://10.255.255.1:6379/0";
    let out = onnxc(&["serve", "--listen", &sock, "--cache", remote]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--cache-key-file") && err.contains("--trust-shared-cache"),
        "{err}"
    );
    let key_file = secret_file(&dir, "fleet.key", "0123456789abcdef-fleet-secret");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    let out = onnxc(&[
        "serve",
        "--listen",
        &sock,
        "--cache",
        remote,
        "--cache-key-file",
        &key_file,
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("chmod 600"));
    // Trusted explicitly, it starts (and serves locally while unreachable).
    gen(&dir, "mlp", 3, "m.onnx");
    let d = Daemon::start_named(&dir, "t", &["--cache", remote, "--trust-shared-cache"]);
    assert_eq!(compile(&d, "m.onnx")["status"], "ok");
}

/// A value under a compile lock that is not a live onnxc lock (no expiry,
/// more time left than its stated lifetime, not a string) holds nobody up
/// for long: after one lock lifetime the waiter deletes it and compiles.
#[test]
fn a_poisoned_lock_is_ignored_after_a_lifetime() {
    let dir = workdir("redis-poison");
    let redis = Redis::start(&dir);
    let url = redis.url();
    gen(&dir, "mlp", 3, "m.onnx");
    let a = Daemon::start_named(&dir, "a", &["--cache", &url]);
    let hex = compile(&a, "m.onnx")["key"].as_str().unwrap().to_string();
    let (art, lock) = (format!("onnxc:a:{hex}"), format!("onnxc:l:{hex}"));
    let poisons: [&[&str]; 3] = [
        &["SET", &lock, "x"],
        &["SET", &lock, "onnxc-lock1 t-1 500", "PX", "100000000"],
        &["HSET", &lock, "f", "v"],
    ];
    for (i, poison) in poisons.iter().enumerate() {
        assert_eq!(redis.cmd(&["DEL", &art]).as_deref(), Some("1"));
        assert!(matches!(redis.cmd(poison).as_deref(), Some("OK" | "1")));
        let b = Daemon::start_named(
            &dir,
            &format!("b{i}"),
            &["--cache", &url, "--cache-lock-ms", "500"],
        );
        let start = Instant::now();
        let r = compile(&b, "m.onnx");
        let took = start.elapsed();
        assert_eq!(
            (r["status"].as_str(), r["cache"].as_str()),
            (Some("ok"), Some("miss")),
            "{r:.300}"
        );
        assert!(
            took >= Duration::from_millis(500) && took < Duration::from_secs(10),
            "{took:?}"
        );
        assert_eq!(shared(&b)["foreign_locks"], 1);
        assert_eq!(redis.cmd(&["EXISTS", &lock]).as_deref(), Some("0"));
    }
}

/// Redis's password never goes through argv: a URL holding one is refused
/// (without echoing it), `--cache-password-file` (mode 600) supplies it,
/// and `stats` does not show it.
#[test]
fn the_redis_password_stays_out_of_argv() {
    let dir = workdir("redis-password");
    let redis = Redis::start(&dir);
    let password = "s3cret-pass-word";
    assert_eq!(
        redis
            .cmd(&["CONFIG", "SET", "requirepass", password])
            .as_deref(),
        Some("OK")
    );
    let sock = format!("unix:{}", dir.join("x.sock").display());
    let in_url = format!("redis://:{password}@127.0.0.1:{}/0", redis.port);
    let out = onnxc(&["serve", "--listen", &sock, "--cache", &in_url]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--cache-password-file") && !err.contains(password),
        "{err}"
    );
    gen(&dir, "mlp", 3, "m.onnx");
    let file = secret_file(&dir, "redis.pass", password);
    let d = Daemon::start_named(
        &dir,
        "d",
        &["--cache", &redis.url(), "--cache-password-file", &file],
    );
    assert_eq!(compile(&d, "m.onnx")["status"], "ok");
    let s = d.stats();
    assert_eq!(
        (s["shared"]["up"].as_bool(), s["shared"]["puts"].as_u64()),
        (Some(true), Some(1)),
        "{s}"
    );
    assert!(!s.to_string().contains(password));
}

/// Redis errors are told apart: a full Redis (`maxmemory` with
/// `noeviction`: every write answered OOM) skips the writes and stays up,
/// and a restart between two requests costs one reconnect on a fresh
/// connection, not an outage.
#[test]
fn a_full_or_restarted_redis_is_not_an_outage() {
    let dir = workdir("redis-errors");
    let mut redis = Redis::start(&dir);
    let (url, port) = (redis.url(), redis.port);
    for i in 0..3u64 {
        gen(&dir, "mlp", 80 + i, &format!("m{i}.onnx"));
    }
    let a = Daemon::start_named(&dir, "a", &["--cache", &url]);
    for (k, v) in [("maxmemory-policy", "noeviction"), ("maxmemory", "1")] {
        assert_eq!(redis.cmd(&["CONFIG", "SET", k, v]).as_deref(), Some("OK"));
    }
    assert_eq!(compile(&a, "m0.onnx")["status"], "ok");
    let s = shared(&a);
    assert!(s["refused"].as_u64().unwrap() >= 1, "{s}");
    assert_eq!(
        (s["up"].as_bool(), s["outages"].as_u64(), s["puts"].as_u64()),
        (Some(true), Some(0), Some(0)),
        "{s}"
    );
    assert_eq!(
        redis.cmd(&["CONFIG", "SET", "maxmemory", "0"]).as_deref(),
        Some("OK")
    );
    assert_eq!(compile(&a, "m1.onnx")["status"], "ok");
    assert_eq!(shared(&a)["puts"], 1, "writes resume at once");
    // Restarted between two requests: the pooled connection is dead.
    redis.kill();
    let redis = Redis::start_on(&dir, port);
    assert_eq!(compile(&a, "m2.onnx")["status"], "ok");
    let s = shared(&a);
    assert_eq!(
        (s["outages"].as_u64(), s["puts"].as_u64()),
        (Some(0), Some(2)),
        "{s}"
    );
    assert!(s["reconnects"].as_u64().unwrap() >= 1, "{s}");
    // Hung (SIGSTOP): given up on within the I/O timeout, then skipped.
    redis.signal("STOP");
    gen(&dir, "mlp", 90, "h.onnx");
    let t = Instant::now();
    assert_eq!(compile(&a, "h.onnx")["status"], "ok");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(shared(&a)["up"], false);
    redis.signal("CONT");
    drop(redis);
}

/// A full Redis refuses the artifacts but not the locks (a script flagged
/// `allow-oom`): a compile another daemon waits for is handed over under
/// a lock lifetime, so the fleet still compiles each model once.
#[test]
fn dedup_goes_on_while_redis_is_full() {
    let dir = workdir("redis-full-dedup");
    let redis = Redis::start(&dir);
    let url = redis.url();
    gen(&dir, "cnn", 95, "c.onnx");
    gen(&dir, "mlp", 95, "m.onnx");
    let hold = dir.join("hold");
    let a = Daemon::start_named_holding(&dir, "a", &["--cache", &url], &hold);
    let b = Daemon::start_named(&dir, "b", &["--cache", &url]);
    for (k, v) in [("maxmemory-policy", "noeviction"), ("maxmemory", "1")] {
        assert_eq!(redis.cmd(&["CONFIG", "SET", k, v]).as_deref(), Some("OK"));
    }
    let (ra, rb) = compile_on_both(&a, &b, &hold, "c.onnx");
    assert_eq!(
        (&ra["status"], &ra["cache"]),
        (&json!("ok"), &json!("miss")),
        "{ra:.300}"
    );
    assert_eq!(
        (&rb["status"], &rb["cache"]),
        (&json!("ok"), &json!("joined")),
        "{rb:.300}"
    );
    assert!(artifact(&rb) == artifact(&ra));
    let (sa, sb) = (a.stats(), b.stats());
    assert_eq!(sb["compiles"], 0, "{sb}");
    assert_eq!(
        (
            sa["shared"]["puts"].as_u64(),
            sa["shared"]["handoffs"].as_u64()
        ),
        (Some(0), Some(1)),
        "{sa}"
    );
    assert_eq!(
        (sa["shared"]["up"].as_bool(), sb["shared"]["up"].as_bool()),
        (Some(true), Some(true))
    );
    // The handed-over entry lives one lock lifetime, not the cache TTL.
    let key = ra["key"].as_str().unwrap();
    let ttl: i64 = redis
        .cmd(&["PTTL", &format!("onnxc:a:{key}")])
        .unwrap()
        .parse()
        .unwrap();
    assert!((0..=10_000).contains(&ttl), "{ttl}");
    // Nobody waits: nothing is stored beyond maxmemory.
    assert_eq!(compile(&a, "m.onnx")["status"], "ok");
    assert_eq!(shared(&a)["handoffs"], 1);
}
