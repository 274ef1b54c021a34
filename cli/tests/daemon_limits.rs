#![allow(clippy::expect_used, clippy::unwrap_used)]
//! What a daemon on a network needs: slow clients and request bytes
//! bounded, FIFOs refused, the auth token; and the request options
//! `input_shapes`, `emit: obj|lib`. Cancellation: daemon_cancel.rs.

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};
use testsuite::daemon::*;

/// Connections that send part of a line and stop are closed after
/// --line-timeout, so they cannot hold every connection slot.
#[test]
fn slow_clients_are_dropped() {
    let dir = workdir("slowloris");
    let d = Daemon::start(&dir, &["--max-connections", "3", "--line-timeout", "1"]);
    let t = Instant::now();
    let mut slow: Vec<UnixStream> = (0..3)
        .map(|_| {
            let mut s = UnixStream::connect(&d.socket).unwrap();
            s.write_all(b"{").unwrap();
            s
        })
        .collect();
    // All slots taken: a fourth connection gets `busy`.
    let r = try_call(&d.socket, &json!({"id": 1, "op": "health"})).unwrap();
    assert_eq!(r["status"], "busy", "{r}");
    for s in &mut slow {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap(); // until the daemon closes it
        assert!(text.contains("not completed within"), "{text}");
    }
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    let r = d.wait_stats("slots free", Duration::from_secs(5), |s| {
        s["connections"] == 1
    });
    // Only the `stats` line itself is held.
    assert!(r["buffered_bytes"].as_u64().unwrap() < 64, "{r}");
    let r = try_call(&d.socket, &json!({"id": 2, "op": "health"})).unwrap();
    assert_eq!(r["status"], "ok");
}

/// --max-buffered-bytes bounds the partial lines of all connections
/// together: beyond it a line is answered `busy`, and the connection goes on.
#[test]
fn buffered_bytes_are_bounded() {
    let dir = workdir("buffered");
    let d = Daemon::start(&dir, &["--max-buffered-bytes", "64K"]);
    let mut big = UnixStream::connect(&d.socket).unwrap();
    big.write_all(&vec![b' '; 50 << 10]).unwrap();
    d.wait_stats("50K held", Duration::from_secs(10), |s| {
        s["buffered_bytes"].as_u64().unwrap() >= 50 << 10
    });
    let line = format!(
        "{{\"id\": 3, \"op\": \"health\", \"pad\": \"{}\"}}",
        "x".repeat(30 << 10)
    );
    let mut c = d.connect();
    let r = c.call_raw(&line);
    assert_eq!(r["status"], "busy", "{r}");
    big.write_all(b"\n").unwrap(); // a blank line: nothing to answer
    d.wait_stats("released", Duration::from_secs(10), |s| {
        s["buffered_bytes"].as_u64().unwrap() < 64 // the `stats` line
    });
    let r = c.call_raw(&line);
    assert_eq!(
        r["error"], "bad_request",
        "unknown field, no longer busy: {r}"
    );
    assert_eq!(r["id"], 3);
}

/// `m` written to `ext` with its weights in `ext.data` (external data).
fn write_external(m: &std::path::Path, ext: &std::path::Path) {
    onnxc_ok(&[
        "compile",
        m.to_str().unwrap(),
        "--emit",
        "onnx",
        "-o",
        ext.to_str().unwrap(),
        "--external-data-threshold",
        "64",
    ]);
}

/// A FIFO is never opened for reading: neither as a model nor as external
/// data (either would block a worker), and shutdown stays prompt.
#[test]
fn fifos_are_refused() {
    let dir = workdir("fifo");
    let m = gen(&dir, "mlp", 8, "m.onnx");
    let ext = dir.join("ext.onnx");
    write_external(&m, &ext);
    let data = dir.join("ext.onnx.data");
    assert!(data.exists());
    std::fs::remove_file(&data).unwrap();
    let mkfifo = |p: &std::path::Path| {
        assert!(std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap()
            .success());
    };
    mkfifo(&data);
    mkfifo(&dir.join("pipe.onnx"));
    let mut d = Daemon::start(&dir, &[]);
    let t = Instant::now();
    let mut c = d.connect();
    let r = c.call(&json!({"id": 1, "op": "compile", "model_path": "pipe.onnx"}));
    assert_eq!(r["error"], "refused", "{r}");
    assert!(
        r["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("regular file"),
        "{r}"
    );
    let r = c.call(&json!({"id": 2, "op": "compile", "model_path": "ext.onnx"}));
    assert_eq!(r["error"], "compile", "{r}");
    assert!(
        r["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("regular file"),
        "{r}"
    );
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    drop(c);
    d.signal("TERM");
    assert!(d.wait(Duration::from_secs(10)).success());
}

/// With --auth-token-file every request but `health` carries the token; a
/// wrong one closes the connection. --allow-remote requires the file.
#[test]
fn the_token_is_required() {
    let dir = workdir("auth");
    gen(&dir, "mlp", 9, "m.onnx");
    let token = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
    let file = dir.join("token");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    // Open to group or others (a fresh file's 0644): refused, as ssh does.
    let world = onnxc(&[
        "serve",
        "--listen",
        "tcp:127.0.0.1:0",
        "--auth-token-file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(world.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&world.stderr).contains("chmod 600"));
    // So is a cache directory others may write into (its entries are the
    // code the daemon serves); a new one is made mode 700.
    let shared_dir = dir.join("open-cache");
    std::fs::create_dir_all(&shared_dir).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&shared_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let open = onnxc(&[
            "serve",
            "--listen",
            "tcp:127.0.0.1:0",
            "--cache-dir",
            shared_dir.to_str().unwrap(),
        ]);
        assert_eq!(open.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&open.stderr).contains("writable by others"));
        let fresh = dir.join("fresh-cache");
        let _ = std::fs::remove_dir_all(&fresh);
        let d = Daemon::start_named(&dir, "fresh", &["--cache-dir", fresh.to_str().unwrap()]);
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        drop(d);
    }
    let out = onnxc(&["serve", "--listen", "tcp:127.0.0.1:0", "--allow-remote"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--auth-token-file"));
    let file_arg = file.to_str().unwrap();
    let d = Daemon::start(&dir, &["--auth-token-file", file_arg]);
    let mut c = d.connect();
    assert_eq!(c.call(&json!({"id": 1, "op": "health"}))["status"], "ok");
    let r = c.call(&json!({"id": 2, "op": "stats", "token": token}));
    assert_eq!(r["status"], "ok", "{r}");
    let r = c.call(&json!({"id": 3, "op": "compile", "model_path": "m.onnx", "token": "nope"}));
    assert_eq!(r["error"], "unauthorized", "{r}");
    let mut rest = String::new();
    let _ = c.call_raw_nowait("{\"id\": 4, \"op\": \"health\"}");
    c.read_rest(&mut rest);
    assert_eq!(rest, "", "the connection was closed");
    let r = d
        .connect()
        .call(&json!({"id": 5, "op": "compile", "model_path": "m.onnx"}));
    assert_eq!(r["error"], "unauthorized", "{r}");
    // The client sends the token of --auth-token-file.
    let ok = onnxc(&[
        "client",
        "--connect",
        &d.addr,
        "--auth-token-file",
        file_arg,
        "stats",
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    let no = onnxc(&["client", "--connect", &d.addr, "stats"]);
    assert!(!no.status.success());
    assert_eq!(d.stats_with_token(token)["unauthorized"], 3);
}

/// `input_shapes` is part of the key and checked against the model.
#[test]
fn input_shapes_are_checked_and_keyed() {
    let dir = workdir("shapes");
    gen(&dir, "cnn", 4, "c.onnx");
    let d = Daemon::start(&dir, &[]);
    let mut c = d.connect();
    let req = |shapes: Value| json!({"id": "s", "op": "compile", "model_path": "c.onnx", "emit": "onnx-ir", "input_shapes": shapes});
    let plain = c.call(&req(json!([])));
    let fixed = c.call(&req(json!(["x=1x3x32x32"])));
    assert_eq!(
        (plain["status"].as_str(), fixed["status"].as_str()),
        (Some("ok"), Some("ok"))
    );
    assert_ne!(plain["key"], fixed["key"]);
    let r = c.call(&req(json!(["nope=1x2"])));
    assert_eq!(r["error"], "bad_request", "{r}");
    assert!(
        r["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("'nope'"),
        "{r}"
    );
    let r = c.call(&req(json!(["x=1x3"])));
    assert_eq!(r["error"], "bad_request", "{r}");
    assert!(
        r["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("'x'"),
        "{r}"
    );
    let r = c.call(&req(json!(["x=1xQ"])));
    assert_eq!(r["error"], "bad_request", "{r}");
}

/// `obj` and `lib` are built by the daemon's clang: thin clients need no
/// LLVM. The header matches `onnxc compile --emit lib`'s.
#[test]
fn objects_and_libraries_are_served() {
    let dir = workdir("native");
    let m = gen(&dir, "mlp", 6, "m.onnx");
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let d = Daemon::start(&dir, &[]);
    let mut c = d.connect();
    let r = c.call(&json!({"id": 1, "op": "compile", "model_path": "m.onnx", "emit": "obj"}));
    assert_eq!(r["status"], "ok", "{r:.300}");
    let obj = r["artifact_base64"].as_str().unwrap();
    assert!(obj.starts_with("f0VMR"), "an ELF object"); // "\x7fELF"
    let r = c.call(&json!({"id": 2, "op": "compile", "model_path": "m.onnx", "emit": "lib", "output": "out/libnet.so"}));
    assert_eq!(r["status"], "ok", "{r:.300}");
    let so = std::fs::read(dir.join("out/libnet.so")).unwrap();
    assert_eq!(&so[..4], b"\x7fELF");
    let local = dir.join("local");
    std::fs::create_dir_all(&local).unwrap();
    let lib = local.join("libnet.so");
    onnxc_ok(&[
        "compile",
        m.to_str().unwrap(),
        "--emit",
        "lib",
        "-o",
        lib.to_str().unwrap(),
    ]);
    let header = std::fs::read(dir.join("out/net.h")).unwrap();
    assert!(header == std::fs::read(local.join("net.h")).unwrap());
    // Inline: the library in base64 and its header as text; cached.
    let r = c.call(&json!({"id": 3, "op": "compile", "model_path": "m.onnx", "emit": "lib", "lib_name": "net"}));
    assert_eq!(r["cache"], "hit", "{r:.300}");
    assert_eq!(r["header"].as_str().unwrap().as_bytes(), &header[..]);
    // Through the client, like a local compile.
    let out = dir.join("out/libcli.so");
    onnxc_ok(&[
        "compile",
        m.to_str().unwrap(),
        "--emit",
        "lib",
        "-o",
        out.to_str().unwrap(),
        "--daemon",
        &d.addr,
    ]);
    assert!(dir.join("out/cli.h").exists());
}

/// External data truncated under `--root` while a compile that reads it
/// runs ends that request at most; the daemon stays up (it reads external
/// data into memory: a mapping of the file would fault with SIGBUS).
#[test]
fn a_file_truncated_under_a_compile_does_not_kill_the_daemon() {
    let dir = workdir("truncate");
    let m = gen(&dir, "mlp", 8, "m.onnx");
    let ext = dir.join("ext.onnx");
    write_external(&m, &ext);
    let data = dir.join("ext.onnx.data");
    let hold = dir.join("hold");
    std::fs::write(&hold, "").unwrap();
    let d = Daemon::start_holding(&dir, &[], &hold);
    let socket = d.socket.clone();
    let request = std::thread::spawn(move || {
        Conn::unix(&socket)
            .call(&json!({"id": 1, "op": "compile", "model_path": "ext.onnx", "emit": "memref"}))
    });
    // The compile has imported the model and waits: truncate its data.
    let waiting = dir.join("hold.waiting");
    let start = Instant::now();
    while !waiting.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the compile never waited"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    std::fs::File::options()
        .write(true)
        .open(&data)
        .unwrap()
        .set_len(0)
        .unwrap();
    std::fs::remove_file(&hold).unwrap();
    let r = request.join().unwrap();
    assert_eq!(r["status"], "ok", "read before the truncation: {r:.300}");
    // A later request reads the truncated file: an error, not a crash.
    let r = d
        .connect()
        .call(&json!({"id": 2, "op": "compile", "model_path": "ext.onnx"}));
    assert_eq!(r["error"], "compile", "{r:.300}");
    assert_eq!(
        d.connect().call(&json!({"id": 3, "op": "health"}))["status"],
        "ok"
    );
    // What is read into memory is bounded by --max-model-bytes.
    write_external(&m, &ext);
    let model_len = std::fs::metadata(&ext).unwrap().len();
    assert!(std::fs::metadata(&data).unwrap().len() > 2 * model_len);
    let bound = (2 * model_len).to_string();
    let small = Daemon::start_named(&dir, "small", &["--max-model-bytes", &bound]);
    let r = small
        .connect()
        .call(&json!({"id": 4, "op": "compile", "model_path": "ext.onnx"}));
    assert_eq!(r["error"], "compile", "{r:.300}");
    assert!(r.to_string().contains("external data beyond"), "{r:.300}");
}

/// With --auth-token-file, clients that have not proved the token are
/// kept small, few and brief: four per address (the fifth is turned
/// away), request lines of 8 KiB, --auth-timeout to prove it; a client
/// that proved it is served meanwhile. A client that never reads its
/// replies is dropped after --write-timeout, and SIGTERM stays prompt.
#[test]
fn before_the_token_connections_are_small_few_and_brief() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;
    let dir = workdir("preauth");
    let token = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
    let file = secret_file(&dir, "token", token);
    let file = file.as_str();
    let flags = [
        "--auth-token-file",
        file,
        "--auth-timeout",
        "1",
        "--write-timeout",
        "1",
    ];
    let mut d = Daemon::start_at(&dir, "tcp:127.0.0.1:0", &flags).unwrap();
    let addr = d.addr.strip_prefix("tcp:").unwrap().to_string();
    let line_of = |s: &TcpStream| {
        let mut l = String::new();
        BufReader::new(s).read_line(&mut l).unwrap();
        l
    };
    // A connection that proved the token no longer counts as tokenless.
    let proven = TcpStream::connect(&addr).unwrap();
    let send = |s: &TcpStream, op: &str| {
        let line = format!("{{\"op\":\"{op}\",\"token\":\"{token}\"}}\n");
        let mut w = s;
        w.write_all(line.as_bytes()).unwrap();
        line_of(s)
    };
    assert!(send(&proven, "auth").contains("\"ok\""));
    let held: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    let fifth = TcpStream::connect(&addr).unwrap();
    let l = line_of(&fifth);
    assert!(
        l.contains("busy") && l.contains("not proved the token"),
        "{l}"
    );
    assert!(
        send(&proven, "stats").contains("\"ok\""),
        "served meanwhile"
    );
    // A long tokenless line is answered, not held.
    let mut long = held[0].try_clone().unwrap();
    long.write_all(&vec![b'x'; 100_000]).unwrap();
    long.write_all(b"\n").unwrap();
    let l = line_of(&held[0]);
    assert!(
        l.contains("longer than 8192 bytes before the token is proved"),
        "{l}"
    );
    // Not proved within --auth-timeout: told so and closed.
    std::thread::sleep(Duration::from_millis(1500));
    let l = line_of(&held[1]);
    assert!(l.contains("not proved within"), "{l}");
    let mut rest = Vec::new();
    let _ = (&held[1]).read_to_end(&mut rest);
    assert!(rest.is_empty());
    // A token holder that pipelines and never reads: dropped, and then
    // shutdown takes no longer than the write timeout.
    let mut greedy = TcpStream::connect(&addr).unwrap();
    greedy
        .set_write_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let req = format!("{{\"op\":\"stats\",\"token\":\"{token}\"}}\n");
    let mut sent = 0;
    while sent < 200_000 && greedy.write_all(req.as_bytes()).is_ok() {
        sent += 1;
    }
    let t = Instant::now();
    d.signal("TERM");
    assert!(d.wait(Duration::from_secs(10)).success());
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
}

/// Floods from 64 addresses (127.0.0.2 to .65) that connect and wait, then
/// that send a byte every 200 ms, reconnecting whenever closed: a token
/// holder's new connection still gets `health` and `stats` within 2 s
/// (the oldest tokenless connections give way to new ones).
#[test]
fn floods_from_many_addresses_leave_token_holders_served() {
    let dir = workdir("flood");
    let token = "5a4b3c2d1e0f5a4b3c2d1e0f5a4b3c2d";
    let file = secret_file(&dir, "token", token);
    let d = Daemon::start_at(&dir, "tcp:127.0.0.1:0", &["--auth-token-file", &file]).unwrap();
    let addr = d.addr.strip_prefix("tcp:").unwrap().to_string();
    let to: std::net::SocketAddrV4 = addr.parse().unwrap();
    for drip in [None, Some(Duration::from_millis(200))] {
        let flood = Flood::start(to, 64, drip);
        let start = Instant::now();
        while call_with_token(&addr, token, "stats", Duration::from_secs(2)).0["stats"]
            ["connections"]
            .as_u64()
            .is_none_or(|c| c < 16)
        {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the flood connects"
            );
        }
        for op in ["health", "stats", "health", "stats"] {
            let (r, took, tries) = call_with_token(&addr, token, op, Duration::from_secs(2));
            assert_eq!(
                r["status"], "ok",
                "{op} during the flood ({drip:?}): {r} after {took:?}, {tries} tries"
            );
        }
        let made = flood.stop();
        assert!(made > 64, "the flood was turned away and came back: {made}");
    }
}
