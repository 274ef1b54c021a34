//! Helpers of the daemon tests: a daemon child process that is killed when
//! the test ends, a line client, and zoo models with reference artifacts.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use crate::onnxc_bin;

pub fn workdir(name: &str) -> PathBuf {
    let d = crate::target_tmp().join("daemon").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create workdir");
    d
}

pub fn onnxc(args: &[&str]) -> std::process::Output {
    Command::new(onnxc_bin())
        .args(args)
        .output()
        .expect("run onnxc")
}

pub fn onnxc_ok(args: &[&str]) -> Vec<u8> {
    let out = onnxc(args);
    assert!(
        out.status.success(),
        "onnxc {} failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `onnxc zoo gen NAME --seed SEED` into DIR/FILE.
pub fn gen(dir: &Path, name: &str, seed: u64, file: &str) -> PathBuf {
    let p = dir.join(file);
    onnxc_ok(&[
        "zoo",
        "gen",
        name,
        "--seed",
        &seed.to_string(),
        "-o",
        p.to_str().unwrap(),
    ]);
    p
}

/// What `onnxc compile` writes for this model: the reference artifact.
pub fn reference(model: &Path, emit: &str) -> Vec<u8> {
    onnxc_ok(&["compile", model.to_str().unwrap(), "--emit", emit])
}

pub struct Daemon {
    pub child: Child,
    pub addr: String,
    pub socket: PathBuf,
}

impl Daemon {
    /// Starts `onnxc serve --listen unix:DIR/d.sock --root DIR EXTRA...`
    /// and waits for its "listening on" line.
    pub fn start(dir: &Path, extra: &[&str]) -> Daemon {
        let socket = dir.join("d.sock");
        let addr = format!("unix:{}", socket.display());
        Daemon::start_at(dir, &addr, extra).expect("daemon starts")
    }

    /// Like `start`, with the debug build's test hook: compiles wait while
    /// the file `hold` exists (ONNXC_TEST_HOLD, daemon/src/work.rs).
    pub fn start_holding(dir: &Path, extra: &[&str], hold: &Path) -> Daemon {
        let addr = format!("unix:{}", dir.join("d.sock").display());
        Daemon::spawn(dir, &addr, extra, Some(hold)).expect("daemon starts")
    }

    pub fn start_at(dir: &Path, listen: &str, extra: &[&str]) -> Result<Daemon, String> {
        Daemon::spawn(dir, listen, extra, None)
    }

    fn spawn(
        dir: &Path,
        listen: &str,
        extra: &[&str],
        hold: Option<&Path>,
    ) -> Result<Daemon, String> {
        let mut cmd = Command::new(onnxc_bin());
        if let Some(h) = hold {
            cmd.env("ONNXC_TEST_HOLD", h);
        }
        let mut child = cmd
            .args(["serve", "--listen", listen, "--root", dir.to_str().unwrap()])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn daemon");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("read daemon stdout");
        let Some(addr) = line.trim().strip_prefix("onnxc serve: listening on ") else {
            let out = child.wait_with_output().expect("daemon exit");
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        };
        let socket = PathBuf::from(addr.strip_prefix("unix:").unwrap_or(""));
        Ok(Daemon {
            child,
            addr: addr.to_string(),
            socket,
        })
    }

    pub fn connect(&self) -> Conn {
        Conn::unix(&self.socket)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &self.pid().to_string()])
            .status()
            .expect("run kill")
            .success();
        assert!(ok, "kill -{sig} failed");
    }

    /// Waits for the daemon to exit (bounded) and returns its exit status.
    pub fn wait(&mut self, limit: Duration) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return s;
            }
            assert!(
                start.elapsed() < limit,
                "daemon did not exit within {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stats(&self) -> Value {
        let r = self.connect().call(&json!({"id": "stats", "op": "stats"}));
        assert_eq!(r["status"], "ok", "{r}");
        r["stats"].clone()
    }

    /// Stats once the daemon is at rest: no job running or queued, nothing
    /// left for the reaper, no flight, no connection but this one. A reply reaches the client
    /// before its worker and connection thread drop what they hold, so a
    /// snapshot taken at once can count a request still being freed. Of a
    /// few samples at rest, the one with the least heap in use.
    pub fn settled_stats(&self) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut best: Option<Value> = None;
        let mut rest_samples = 0;
        while rest_samples < 5 && std::time::Instant::now() < deadline {
            let s = self.stats();
            let at_rest = s["pool"]["running"] == 0
                && s["pool"]["queued"] == 0
                && s["pool"]["reaping"] == 0
                && s["in_flight"] == 0
                && s["connections"].as_u64().is_some_and(|c| c <= 1);
            if at_rest {
                rest_samples += 1;
                if best.as_ref().is_none_or(|b| heap_bytes(&s) < heap_bytes(b)) {
                    best = Some(s);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        best.expect("the daemon came to rest within 10 s")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Conn {
    w: UnixStream,
    r: BufReader<UnixStream>,
}

impl Conn {
    pub fn unix(path: &Path) -> Conn {
        let s = UnixStream::connect(path).expect("connect to daemon");
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        Conn {
            w: s.try_clone().unwrap(),
            r: BufReader::new(s),
        }
    }

    pub fn call_raw(&mut self, line: &str) -> Value {
        self.w.write_all(line.as_bytes()).expect("send");
        self.w.write_all(b"\n").expect("send");
        let mut resp = String::new();
        self.r.read_line(&mut resp).expect("receive");
        assert!(
            !resp.is_empty(),
            "daemon closed the connection after {line:.200}"
        );
        serde_json::from_str(&resp).expect("response is JSON")
    }

    /// Sends several request lines in one write, then reads one response
    /// per line (the daemon answers a connection's requests in order).
    pub fn pipeline(&mut self, reqs: &[Value]) -> Vec<Value> {
        let text: String = reqs.iter().map(|r| format!("{r}\n")).collect();
        self.w.write_all(text.as_bytes()).expect("send");
        reqs.iter()
            .map(|_| {
                let mut resp = String::new();
                self.r.read_line(&mut resp).expect("receive");
                serde_json::from_str(&resp).expect("response is JSON")
            })
            .collect()
    }

    pub fn call(&mut self, req: &Value) -> Value {
        self.call_raw(&req.to_string())
    }
}

/// One request on a fresh connection; `None` when there is no daemon or it
/// closed the connection without answering.
pub fn try_call(socket: &Path, req: &Value) -> Option<Value> {
    let s = UnixStream::connect(socket).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(120))).ok()?;
    let mut w = s.try_clone().ok()?;
    w.write_all(format!("{req}\n").as_bytes()).ok()?;
    let mut resp = String::new();
    BufReader::new(s).read_line(&mut resp).ok()?;
    serde_json::from_str(&resp).ok()
}

/// The artifact bytes of an ok response.
pub fn artifact(r: &Value) -> Vec<u8> {
    if let Some(t) = r["artifact"].as_str() {
        return t.as_bytes().to_vec();
    }
    panic!("no inline text artifact in {r:.300}");
}

pub fn rss_bytes(stats: &Value) -> u64 {
    stats["rss_bytes"].as_u64().expect("rss_bytes")
}

/// The daemon's anonymous RSS: its memory without mapped files (the
/// binary's code pages come in as new code paths run).
pub fn rss_anon_bytes(stats: &Value) -> u64 {
    stats["rss_anon_bytes"].as_u64().expect("rss_anon_bytes")
}

/// The daemon's heap in use (glibc's `mallinfo2`): unlike the RSS, not
/// moved by malloc's per-thread arenas, so a leak shows as a trend.
pub fn heap_bytes(stats: &Value) -> u64 {
    stats["heap_bytes"].as_u64().expect("heap_bytes")
}

/// A file `dir/name` holding `secret`, readable by its owner only (mode
/// 600, as token and key files must be); its path.
pub fn secret_file(dir: &Path, name: &str, secret: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("{secret}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p.to_str().unwrap().to_string()
}

pub fn b64(data: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// `onnxc zoo gen NAME` (a zoo or scaling model, e.g. `chain-12000`)
/// into DIR/FILE, once: later calls reuse the file.
pub fn gen_once(dir: &Path, name: &str, file: &str) -> PathBuf {
    let p = dir.join(file);
    if !p.exists() {
        onnxc_ok(&["zoo", "gen", name, "-o", p.to_str().unwrap()]);
    }
    p
}

impl Daemon {
    /// A second (third...) daemon in the same root: its own socket name.
    pub fn start_named(dir: &Path, name: &str, extra: &[&str]) -> Daemon {
        let addr = format!("unix:{}", dir.join(format!("{name}.sock")).display());
        Daemon::start_at(dir, &addr, extra).expect("daemon starts")
    }

    /// `start_named` with the test hook of `start_holding`.
    pub fn start_named_holding(dir: &Path, name: &str, extra: &[&str], hold: &Path) -> Daemon {
        let addr = format!("unix:{}", dir.join(format!("{name}.sock")).display());
        Daemon::spawn(dir, &addr, extra, Some(hold)).expect("daemon starts")
    }

    /// Polls `stats` until `pred` holds (bounded); returns the stats.
    pub fn wait_stats(&self, what: &str, limit: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let s = self.stats();
            if pred(&s) {
                return s;
            }
            assert!(start.elapsed() < limit, "{what}: not within {limit:?}: {s}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// A `redis-server` (installed by scripts/setup-test-deps.sh) on a free
/// loopback port, without persistence; killed when dropped.
pub struct Redis {
    child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
}

impl Redis {
    pub fn start(dir: &Path) -> Redis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        Redis::start_on(dir, port)
    }

    /// On a given port (a restart after `kill`).
    pub fn start_on(dir: &Path, port: u16) -> Redis {
        let dir = dir.join("redis");
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server (scripts/setup-test-deps.sh installs it)");
        let r = Redis {
            child: Some(child),
            port,
            dir,
        };
        let start = Instant::now();
        while r.cmd(&["PING"]).as_deref() != Some("PONG") {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "redis did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        r
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// One command through redis-cli (an oracle that is not ours); its
    /// output, trimmed, or None when the server does not answer.
    pub fn cmd(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(args)
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !text.starts_with("Could not connect")).then_some(text)
    }

    /// Sends `sig` (`STOP`: the server hangs, connections stay open).
    pub fn signal(&self, sig: &str) {
        if let Some(c) = &self.child {
            let ok = Command::new("kill")
                .args([&format!("-{sig}"), &c.id().to_string()])
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "kill -{sig}");
        }
    }

    /// SIGKILL: the server is gone at once.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Conn {
    /// Sends a line without waiting for the answer.
    pub fn call_raw_nowait(&mut self, line: &str) -> std::io::Result<()> {
        self.w.write_all(line.as_bytes())?;
        self.w.write_all(b"\n")
    }

    /// Everything until the daemon closes the connection.
    pub fn read_rest(&mut self, out: &mut String) {
        use std::io::Read;
        let _ = self.r.read_to_string(out);
    }
}

impl Daemon {
    /// `stats` of a daemon started with --auth-token-file.
    pub fn stats_with_token(&self, token: &str) -> Value {
        let r = self
            .connect()
            .call(&json!({"id": "stats", "op": "stats", "token": token}));
        assert_eq!(r["status"], "ok", "{r}");
        r["stats"].clone()
    }
}

/// A TCP connection to `to` from the loopback address `from` (Linux
/// routes all of 127.0.0.0/8 to loopback): one machine plays many peers.
pub fn connect_from(
    from: std::net::Ipv4Addr,
    to: std::net::SocketAddrV4,
) -> std::io::Result<std::net::TcpStream> {
    use std::os::fd::FromRawFd;
    let sockaddr = |ip: std::net::Ipv4Addr, port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(ip).to_be(),
        },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    let (src, dst) = (sockaddr(from, 0), sockaddr(*to.ip(), to.port()));
    // SAFETY: a fresh socket owned by the TcpStream at once; the
    // addresses are valid sockaddr_in values of `len` bytes.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let stream = std::net::TcpStream::from_raw_fd(fd);
        let as_ptr =
            |a: &libc::sockaddr_in| (a as *const libc::sockaddr_in).cast::<libc::sockaddr>();
        if libc::bind(fd, as_ptr(&src), len) != 0 || libc::connect(fd, as_ptr(&dst), len) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stream)
    }
}

/// Tokenless clients, one per address 127.0.0.2, .3, ...: each connects
/// and holds its connection (idle, or sending one byte every `drip`),
/// and connects again when the daemon closes it, until stopped.
pub struct Flood {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<u64>>,
}

impl Flood {
    pub fn start(to: std::net::SocketAddrV4, peers: u8, drip: Option<Duration>) -> Flood {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let threads = (0..peers)
            .map(|i| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let from = std::net::Ipv4Addr::new(127, 0, 0, 2 + i);
                    let mut connections = 0;
                    while !stop.load(Ordering::SeqCst) {
                        let Ok(mut s) = connect_from(from, to) else {
                            std::thread::sleep(Duration::from_millis(5));
                            continue;
                        };
                        connections += 1;
                        Flood::hold(&mut s, drip, &stop);
                    }
                    connections
                })
            })
            .collect();
        Flood { stop, threads }
    }

    /// Until the daemon closes `s` or the flood stops.
    fn hold(
        s: &mut std::net::TcpStream,
        drip: Option<Duration>,
        stop: &std::sync::atomic::AtomicBool,
    ) {
        use std::io::Read;
        let tick = drip.unwrap_or(Duration::from_millis(20));
        s.set_read_timeout(Some(tick)).unwrap();
        let mut sink = [0u8; 512];
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            if drip.is_some() && s.write_all(b"{").is_err() {
                return;
            }
            match s.read(&mut sink) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        || e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => return,
            }
        }
    }

    /// Stops the flood; the connections it made.
    pub fn stop(self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.threads.into_iter().map(|t| t.join().unwrap()).sum()
    }
}

/// A token holder's request on a new TCP connection: `auth`, then `op`,
/// tried again while answered `busy` (its connection gave way to a newer
/// tokenless one) within `limit`; the answer, the time and the tries.
pub fn call_with_token(to: &str, token: &str, op: &str, limit: Duration) -> (Value, Duration, u32) {
    let start = Instant::now();
    let mut tries = 0;
    loop {
        tries += 1;
        let answer = (|| {
            let s = std::net::TcpStream::connect(to).ok()?;
            s.set_read_timeout(Some(limit)).ok()?;
            let mut w = &s;
            let lines = format!("{{\"op\":\"auth\",\"token\":\"{token}\"}}\n{{\"op\":\"{op}\",\"token\":\"{token}\"}}\n");
            w.write_all(lines.as_bytes()).ok()?;
            let mut r = BufReader::new(&s);
            let mut line = String::new();
            r.read_line(&mut line).ok()?;
            let auth: Value = serde_json::from_str(&line).ok()?;
            if auth["status"] != "ok" {
                return Some(auth);
            }
            line.clear();
            r.read_line(&mut line).ok()?;
            serde_json::from_str(&line).ok()
        })();
        let busy = answer.as_ref().is_none_or(|a| a["status"] == "busy");
        if !busy || start.elapsed() >= limit {
            return (answer.unwrap_or(Value::Null), start.elapsed(), tries);
        }
    }
}
