//! `onnxc client --connect ADDR ...`: speaks the daemon protocol for
//! scripts and tests; also behind `onnxc compile --daemon ADDR`.

use super::{write_output, CmdResult, Failure};
use crate::daemon::addr::{Addr, Stream};
use crate::daemon::b64;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct ClientArgs {
    /// unix:PATH or tcp:HOST:PORT
    #[arg(long, value_name = "ADDR")]
    pub connect: String,
    #[command(subcommand)]
    pub cmd: ClientCmd,
}

#[derive(clap::Subcommand)]
pub enum ClientCmd {
    /// Is the daemon up? Prints the response.
    Health,
    /// Counters, cache and pool state, RSS. Prints the response.
    Stats,
    /// Ask the daemon to finish in-flight work and exit.
    Shutdown,
    /// Compile a model; the artifact goes to -o or stdout.
    Compile(ModelArgs),
    /// Fold a model, ONNX to ONNX.
    Fold(ModelArgs),
    /// Send JSON request lines from stdin, print the response lines.
    Raw,
}

#[derive(clap::Args)]
pub struct ModelArgs {
    pub model: PathBuf,
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    #[arg(long, default_value = "llvm")]
    pub emit: String,
    #[arg(long, value_name = "STAGE")]
    pub stop_after: Option<String>,
    /// Send the model's path (it must lie under the daemon's --root)
    /// instead of its bytes.
    #[arg(long)]
    pub by_path: bool,
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// As for `onnxc compile`/`fold`.
    #[arg(long, value_name = "F")]
    pub fold_expansion_bound: Option<f64>,
}

/// One connection; requests go one at a time.
pub struct Client {
    writer: Stream,
    reader: BufReader<Stream>,
}

impl Client {
    pub fn connect(addr: &str) -> Result<Client, Failure> {
        let a = Addr::parse(addr).map_err(Failure::Io)?;
        let s = Stream::connect(&a)
            .map_err(|e| Failure::Io(format!("cannot connect to {addr}: {e}")))?;
        let writer = s.try_clone().map_err(|e| Failure::Io(e.to_string()))?;
        Ok(Client {
            writer,
            reader: BufReader::new(s),
        })
    }

    /// Sends one line and reads the response line.
    pub fn call_line(&mut self, line: &[u8]) -> Result<Value, Failure> {
        let lost = |e: std::io::Error| Failure::Io(format!("daemon connection: {e}"));
        self.writer.write_all(line).map_err(lost)?;
        self.writer.write_all(b"\n").map_err(lost)?;
        let mut resp = Vec::new();
        self.reader.read_until(b'\n', &mut resp).map_err(lost)?;
        if resp.is_empty() {
            return Err(Failure::Io("the daemon closed the connection".into()));
        }
        serde_json::from_slice(&resp)
            .map_err(|e| Failure::Io(format!("bad response from daemon: {e}")))
    }

    pub fn call(&mut self, req: &Value) -> Result<Value, Failure> {
        self.call_line(req.to_string().as_bytes())
    }
}

/// The artifact of an `ok` response, or a failure carrying its diagnostics.
pub fn artifact(resp: &Value) -> Result<Vec<u8>, Failure> {
    if resp["status"] != "ok" {
        return Err(Failure::Io(describe_failure(resp)));
    }
    if let Some(t) = resp["artifact"].as_str() {
        return Ok(t.as_bytes().to_vec());
    }
    if let Some(b) = resp["artifact_base64"].as_str() {
        return b64::decode(b).map_err(|e| Failure::Io(format!("bad artifact from daemon: {e}")));
    }
    Err(Failure::Io("the daemon returned no inline artifact".into()))
}

fn describe_failure(resp: &Value) -> String {
    let mut msg = format!(
        "daemon: {}{}",
        resp["status"].as_str().unwrap_or("?"),
        resp["error"]
            .as_str()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default()
    );
    for d in resp["diagnostics"].as_array().into_iter().flatten() {
        msg.push('\n');
        msg.push_str(d["message"].as_str().unwrap_or(""));
    }
    msg
}

/// The request for compiling (or folding) one local model.
pub fn model_request(
    op: &str,
    model: &Path,
    emit: &str,
    stop_after: Option<&str>,
    by_path: bool,
    timeout_ms: Option<u64>,
    fold_expansion_bound: Option<f64>,
) -> Result<Value, Failure> {
    let mut req = json!({"id": model.display().to_string(), "op": op});
    if op == "compile" {
        req["emit"] = json!(emit);
    }
    if let Some(s) = stop_after {
        req["stop_after"] = json!(s);
    }
    if let Some(t) = timeout_ms {
        req["timeout_ms"] = json!(t);
    }
    if let Some(b) = fold_expansion_bound {
        req["fold_expansion_bound"] = json!(b);
    }
    if by_path {
        let p = model
            .canonicalize()
            .map_err(|e| super::io_err("open", model, e))?;
        req["model_path"] = json!(p.to_string_lossy());
    } else {
        let bytes = std::fs::read(model).map_err(|e| super::io_err("read", model, e))?;
        req["model_base64"] = json!(b64::encode(&bytes));
    }
    Ok(req)
}

/// `onnxc compile --daemon ADDR MODEL -o OUT`: same artifact, compiled
/// (or found in the cache) by the daemon.
pub fn compile_remote(
    client: &mut Client,
    model: &Path,
    emit: &str,
    stop_after: Option<&str>,
    fold_expansion_bound: Option<f64>,
    output: Option<&Path>,
) -> CmdResult {
    let req = model_request(
        "compile",
        model,
        emit,
        stop_after,
        false,
        None,
        fold_expansion_bound,
    )?;
    let resp = client.call(&req)?;
    write_output(output, &artifact(&resp)?)
}

pub fn run(args: ClientArgs) -> CmdResult {
    let mut c = Client::connect(&args.connect)?;
    let print = |resp: &Value| -> CmdResult {
        println!("{}", serde_json::to_string_pretty(resp).unwrap_or_default());
        if resp["status"] == "ok" {
            Ok(())
        } else {
            Err(Failure::Quiet)
        }
    };
    match args.cmd {
        ClientCmd::Health => print(&c.call(&json!({"id": 1, "op": "health"}))?),
        ClientCmd::Stats => print(&c.call(&json!({"id": 1, "op": "stats"}))?),
        ClientCmd::Shutdown => print(&c.call(&json!({"id": 1, "op": "shutdown"}))?),
        ClientCmd::Compile(m) => model_cmd(&mut c, "compile", &m),
        ClientCmd::Fold(m) => model_cmd(&mut c, "fold", &m),
        ClientCmd::Raw => {
            let stdin = std::io::stdin();
            for line in stdin.lock().lines() {
                let line = line.map_err(|e| Failure::Io(format!("stdin: {e}")))?;
                if line.trim().is_empty() {
                    continue;
                }
                println!("{}", c.call_line(line.as_bytes())?);
            }
            Ok(())
        }
    }
}

fn model_cmd(c: &mut Client, op: &str, m: &ModelArgs) -> CmdResult {
    let req = model_request(
        op,
        &m.model,
        &m.emit,
        m.stop_after.as_deref(),
        m.by_path,
        m.timeout_ms,
        m.fold_expansion_bound,
    )?;
    let resp = c.call(&req)?;
    for d in resp["diagnostics"].as_array().into_iter().flatten() {
        if resp["status"] == "ok" {
            eprintln!("{}", d["message"].as_str().unwrap_or(""));
        }
    }
    write_output(m.output.as_deref(), &artifact(&resp)?)
}
