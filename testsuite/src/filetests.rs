//! Filetests: every `tests/filetests/**/*.mlir` is one test.
//!
//! Each `// RUN:` line is a small pipeline:
//!   `onnxc ARGS... [| run-llvm [--valgrind] [--threads N] [--cpu-level L]]
//!    [| filecheck [--check-prefix=P]]`
//! `%s` is the test file. `onnxc opt` always runs with `--verify-each`.
//! `run-llvm` builds the LLVM IR on stdin with clang-19 and runs it; its
//! stdout flows on. Without an explicit `filecheck` stage, a file's only RUN
//! line is checked against its `CHECK` lines if it has any.
//! The `filecheck` stage is LLVM's FileCheck.
//! A file with `// PRECISE-OUTPUT` must print exactly the comment block
//! after its `// ----- OUTPUT -----` line; `ONNXC_BLESS=1` rewrites it.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const OUTPUT_MARKER: &str = "// ----- OUTPUT -----";

/// Runs every filetest (libtest-style arguments from the command line).
pub fn main() {
    let args = Arguments::from_args();
    let root = crate::repo_root().join("tests/filetests");
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let trials = files
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .display()
                .to_string();
            Trial::test(name, move || run_file(&path))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "mlir") {
            out.push(p);
        }
    }
}

/// Shell-like split honouring single and double quotes.
fn split_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut has = false;
    for c in s.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                has = true;
            }
            None if c.is_whitespace() => {
                if has || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            None => cur.push(c),
        }
    }
    if has || !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// RUN lines, with `\` continuations joined.
fn run_lines(src: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    for line in src.lines() {
        let Some(pos) = line.find("RUN:") else {
            continue;
        };
        let body = line[pos + 4..].trim();
        let (body, cont) = match body.strip_suffix('\\') {
            Some(b) => (b.trim_end(), true),
            None => (body, false),
        };
        let joined = match pending.take() {
            Some(p) => format!("{p} {body}"),
            None => body.to_string(),
        };
        if cont {
            pending = Some(joined);
        } else {
            out.push(joined);
        }
    }
    out
}

fn llvm_tool(name: &str) -> Result<PathBuf, Failed> {
    let dirs = [
        std::env::var("LLVM_BIN").ok(),
        Some("/usr/lib/llvm-19/bin".to_string()),
    ];
    for d in dirs.into_iter().flatten() {
        let p = Path::new(&d).join(name);
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(format!("{name} (LLVM 19) not found: run scripts/setup-test-deps.sh").into())
}

fn run_file(path: &Path) -> Result<(), Failed> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("read {}: {e}", path.display()))?;
    let runs = run_lines(&src);
    if runs.is_empty() {
        return Err("no RUN line".into());
    }
    let precise = src.contains("// PRECISE-OUTPUT");
    for (i, run) in runs.iter().enumerate() {
        let run = run.replace("%s", &path.display().to_string());
        let stages: Vec<&str> = run.split('|').map(str::trim).collect();
        let mut data = Vec::new();
        let mut checked = false;
        for (k, stage) in stages.iter().enumerate() {
            let words = split_words(stage);
            let Some((tool, rest)) = words.split_first() else {
                return Err(format!("RUN line {}: empty stage", i + 1).into());
            };
            match tool.as_str() {
                "onnxc" if k == 0 => data = run_onnxc(rest)?,
                "run-llvm" => data = run_llvm(&data, &RunOptions::parse(rest), path)?,
                "filecheck" => {
                    let prefix = rest
                        .iter()
                        .find_map(|w| w.strip_prefix("--check-prefix="))
                        .unwrap_or("CHECK");
                    file_check(path, &data, prefix)?;
                    checked = true;
                }
                other => return Err(format!("RUN line {}: unknown tool '{other}'", i + 1).into()),
            }
        }
        let output = String::from_utf8_lossy(&data).into_owned();
        if precise {
            check_precise(path, &src, &output)?;
        } else if !checked && runs.len() == 1 && src.contains("CHECK") {
            file_check(path, &data, "CHECK")?;
        }
    }
    Ok(())
}

fn run_onnxc(args: &[String]) -> Result<Vec<u8>, Failed> {
    let mut cmd = Command::new(crate::onnxc_bin());
    cmd.args(args);
    if args.first().is_some_and(|a| a == "opt") && !args.iter().any(|a| a == "--verify-each") {
        cmd.arg("--verify-each");
    }
    let out = cmd.output().map_err(|e| format!("cannot run onnxc: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "onnxc {} failed ({}):\n{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(out.stdout)
}

/// `run-llvm [--valgrind[=TOOL]] [--threads N]`: memcheck (or drd,
/// helgrind, ...), and `ONNXC_NUM_THREADS=N` for the program.
struct RunOptions {
    valgrind: Option<String>,
    threads: Option<String>,
    /// `ONNXC_CPU_LEVEL`: the highest x86-64 level the variants use.
    cpu_level: Option<String>,
}

impl RunOptions {
    fn parse(words: &[String]) -> RunOptions {
        let mut o = RunOptions {
            valgrind: None,
            cpu_level: None,
            threads: None,
        };
        let mut it = words.iter();
        while let Some(w) = it.next() {
            if w == "--valgrind" {
                o.valgrind = Some("memcheck".into());
            } else if let Some(t) = w.strip_prefix("--valgrind=") {
                o.valgrind = Some(t.into());
            } else if w == "--threads" {
                o.threads = it.next().cloned();
            } else if w == "--cpu-level" {
                o.cpu_level = it.next().cloned();
            }
        }
        o
    }
}

fn run_llvm(ll: &[u8], opts: &RunOptions, test: &Path) -> Result<Vec<u8>, Failed> {
    let dir = crate::target_tmp().join("filetests");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let stem = test.to_string_lossy().replace(['/', '\\', '.'], "_");
    let ll_path = dir.join(format!("{stem}.ll"));
    let exe = dir.join(stem);
    std::fs::write(&ll_path, ll).map_err(|e| e.to_string())?;
    let clang = llvm_tool("clang")?;
    let out = Command::new(clang)
        .args(["-O1", "-g0", "-w", "-o"])
        .arg(&exe)
        .arg(&ll_path)
        .args(["-lm", "-Wl,--as-needed", "-lgomp"])
        .output()
        .map_err(|e| format!("cannot run clang: {e}"))?;
    if !out.status.success() {
        return Err(format!("clang failed:\n{}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let mut cmd = match opts.valgrind.as_deref() {
        Some(tool) => {
            let mut c = Command::new("valgrind");
            c.args(["--quiet", "--error-exitcode=99"])
                .arg(format!("--tool={tool}"));
            if tool == "memcheck" {
                c.args([
                    "--leak-check=full",
                    "--errors-for-leak-kinds=definite,indirect",
                ]);
            }
            c.arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    if let Some(n) = &opts.threads {
        cmd.env("ONNXC_NUM_THREADS", n);
    }
    if let Some(n) = &opts.cpu_level {
        cmd.env("ONNXC_CPU_LEVEL", n);
    }
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "program failed ({}):\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(out.stdout)
}

/// Checks `data` against the test file's directives with LLVM's own
/// FileCheck (the reference implementation, from llvm-19-tools).
fn file_check(path: &Path, data: &[u8], prefix: &str) -> Result<(), Failed> {
    let mut child = Command::new(llvm_tool("FileCheck")?)
        .arg(format!("--check-prefix={prefix}"))
        .arg(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("FileCheck: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("FileCheck: no stdin")?;
    // Fed from a second thread: FileCheck may write before it has read all.
    let (fed, out) = std::thread::scope(|s| {
        let feeder = s.spawn(move || {
            use std::io::Write;
            stdin.write_all(data)
        });
        let out = child.wait_with_output();
        (feeder.join(), out)
    });
    let out = out.map_err(|e| format!("FileCheck: {e}"))?;
    let fed = fed.map_err(|_| "FileCheck: the input writer panicked")?;
    if out.status.success() {
        return fed.map_err(|e| format!("FileCheck: {e}").into());
    }
    Err(String::from_utf8_lossy(&out.stderr).into_owned().into())
}

/// The expected output, stored as `// ` comment lines after the marker.
fn check_precise(path: &Path, src: &str, output: &str) -> Result<(), Failed> {
    let (head, expected) = match src.find(OUTPUT_MARKER) {
        Some(pos) => {
            let tail = &src[pos + OUTPUT_MARKER.len()..];
            let exp: Vec<&str> = tail
                .lines()
                .skip(1)
                .map(|l| {
                    l.strip_prefix("// ")
                        .or_else(|| l.strip_prefix("//"))
                        .unwrap_or(l)
                })
                .collect();
            (&src[..pos], exp.join("\n"))
        }
        None => (src, String::new()),
    };
    let actual = output.trim_end();
    if expected.trim_end() == actual {
        return Ok(());
    }
    if std::env::var_os("ONNXC_BLESS").is_some() {
        let mut new = head.trim_end().to_string();
        new.push_str("\n\n");
        new.push_str(OUTPUT_MARKER);
        new.push('\n');
        for l in actual.lines() {
            new.push_str(if l.is_empty() { "//" } else { "// " });
            new.push_str(l);
            new.push('\n');
        }
        std::fs::write(path, new).map_err(|e| e.to_string())?;
        return Ok(());
    }
    Err(format!(
        "precise output differs (ONNXC_BLESS=1 to update)\n--- expected ---\n{}\n--- actual ---\n{actual}",
        expected.trim_end()
    )
    .into())
}
