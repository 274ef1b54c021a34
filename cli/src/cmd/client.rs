//! `onnxc client --connect ADDR ...`: speaks the daemon protocol for
//! scripts and tests; also behind `onnxc compile --daemon ADDR`.

use super::{write_output, CmdResult, Failure};
use daemon::addr::{Addr, Stream};
use daemon::b64;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct ClientArgs {
    /// unix:PATH or tcp:HOST:PORT
    #[arg(long, value_name = "ADDR")]
    pub connect: String,
    /// The daemon's token (its --auth-token-file); default: the file named
    /// by $ONNXC_AUTH_TOKEN_FILE, if set.
    #[arg(long, value_name = "FILE")]
    pub auth_token_file: Option<PathBuf>,
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
    #[command(flatten)]
    pub shapes: super::ShapeFlags,
}

/// One connection; requests go one at a time.
pub struct Client {
    writer: Stream,
    reader: BufReader<Stream>,
    /// Added to every request as `token`.
    token: Option<String>,
}

/// Names the token file when no --auth-token-file is given.
pub const TOKEN_ENV: &str = "ONNXC_AUTH_TOKEN_FILE";

impl Client {
    /// Connects; the token comes from `$ONNXC_AUTH_TOKEN_FILE` when set.
    pub fn connect(addr: &str) -> Result<Client, Failure> {
        let token_file = std::env::var_os(TOKEN_ENV).map(PathBuf::from);
        Client::connect_with(addr, token_file.as_deref())
    }

    pub fn connect_with(addr: &str, token_file: Option<&Path>) -> Result<Client, Failure> {
        let token = token_file
            .map(|f| daemon::auth::read_secret(f, "--auth-token-file"))
            .transpose()
            .map_err(Failure::Io)?;
        let a = Addr::parse(addr).map_err(Failure::Io)?;
        let s = Stream::connect(&a)
            .map_err(|e| Failure::Io(format!("cannot connect to {addr}: {e}")))?;
        let writer = s.try_clone().map_err(|e| Failure::Io(e.to_string()))?;
        let mut c = Client {
            writer,
            reader: BufReader::new(s),
            token,
        };
        // The daemon keeps lines short until the token is proved: prove
        // it first, so that an inline model can follow.
        if c.token.is_some() {
            let r = c.call(&json!({"id": "auth", "op": "auth"}))?;
            if r["status"] != "ok" {
                return Err(Failure::Io(describe_failure(&r)));
            }
        }
        Ok(c)
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
        match (&self.token, req) {
            (Some(t), Value::Object(o)) if !o.contains_key("token") => {
                let mut with = o.clone();
                with.insert("token".into(), json!(t));
                self.call_line(Value::Object(with).to_string().as_bytes())
            }
            _ => self.call_line(req.to_string().as_bytes()),
        }
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

/// The options of a compile forwarded to a daemon.
#[derive(Default)]
pub struct Remote<'a> {
    pub emit: &'a str,
    pub stop_after: Option<&'a str>,
    pub by_path: bool,
    pub timeout_ms: Option<u64>,
    pub fold_expansion_bound: Option<f64>,
    pub input_shapes: &'a [frontend::import::InputShape],
}

/// `NAME=1x3x?` as the daemon parses it.
/// The request for compiling (or folding) one local model; `output` names
/// a library's C prefix (`-o libNAME.so`).
pub fn model_request(
    op: &str,
    model: &Path,
    o: &Remote<'_>,
    output: Option<&Path>,
) -> Result<Value, Failure> {
    let mut req = json!({"id": model.display().to_string(), "op": op});
    if op == "compile" {
        req["emit"] = json!(o.emit);
    }
    if let Some(s) = o.stop_after {
        req["stop_after"] = json!(s);
    }
    if let Some(t) = o.timeout_ms {
        req["timeout_ms"] = json!(t);
    }
    if let Some(b) = o.fold_expansion_bound {
        req["fold_expansion_bound"] = json!(b);
    }
    if !o.input_shapes.is_empty() {
        req["input_shapes"] = json!(o
            .input_shapes
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>());
    }
    if let (Some(stem), "lib") = (output.and_then(Path::file_stem), o.emit) {
        req["lib_name"] = json!(stem.to_string_lossy());
    }
    if o.by_path {
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

/// Writes the artifact of an `ok` response to `output` (or stdout); a
/// library's header goes next to it, as `onnxc compile --emit lib` does.
fn write_artifact(resp: &Value, emit: &str, output: Option<&Path>) -> CmdResult {
    let data = artifact(resp)?;
    if matches!(emit, "obj" | "lib") && output.is_none_or(|o| o.as_os_str() == "-") {
        return Err(Failure::Io("--emit obj|lib needs -o OUTPUT".into()));
    }
    write_output(output, &data)?;
    if let (Some(out), Some(h)) = (output, resp["header"].as_str()) {
        let stem = out
            .file_stem()
            .map_or("model".into(), |s| s.to_string_lossy());
        let path = out.with_file_name(format!("{}.h", lower::capi::c_prefix(&stem)));
        write_output(Some(&path), h.as_bytes())?;
    }
    Ok(())
}

/// `onnxc compile --daemon ADDR MODEL -o OUT`: same artifact, compiled
/// (or found in the cache) by the daemon.
pub fn compile_remote(
    client: &mut Client,
    model: &Path,
    o: &Remote<'_>,
    output: Option<&Path>,
) -> CmdResult {
    if matches!(o.emit, "obj" | "lib") && output.is_none_or(|p| p.as_os_str() == "-") {
        return Err(Failure::Io("--emit obj|lib needs -o OUTPUT".into()));
    }
    let req = model_request("compile", model, o, output)?;
    let resp = client.call(&req)?;
    write_artifact(&resp, o.emit, output)
}

pub fn run(args: ClientArgs) -> CmdResult {
    let mut c = match &args.auth_token_file {
        Some(f) => Client::connect_with(&args.connect, Some(f))?,
        None => Client::connect(&args.connect)?,
    };
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
    let o = Remote {
        emit: &m.emit,
        stop_after: m.stop_after.as_deref(),
        by_path: m.by_path,
        timeout_ms: m.timeout_ms,
        fold_expansion_bound: m.fold_expansion_bound,
        input_shapes: &m.shapes.input_shapes,
    };
    let req = model_request(op, &m.model, &o, m.output.as_deref())?;
    let resp = c.call(&req)?;
    for d in resp["diagnostics"].as_array().into_iter().flatten() {
        if resp["status"] == "ok" {
            eprintln!("{}", d["message"].as_str().unwrap_or(""));
        }
    }
    write_artifact(&resp, &m.emit, m.output.as_deref())
}
