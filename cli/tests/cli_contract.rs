#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers abort on setup failure
//! The command-line contract: exit codes, diagnostics naming the node, and
//! the instrumentation flags.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn onnxc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .args(args)
        .output()
        .expect("run onnxc")
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_contract")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(onnxc(&["compile"]).status.code(), Some(2));
    assert_eq!(onnxc(&["no-such-command"]).status.code(), Some(2));
    assert_eq!(
        onnxc(&["compile", "m.onnx", "--emit", "bogus"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn bad_input_exits_1_with_a_diagnostic() {
    let d = dir("bad");
    let garbage = d.join("garbage.onnx");
    std::fs::write(&garbage, b"\x08\x07\xff\xff\xff garbage").unwrap();
    let out = onnxc(&["compile", garbage.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("malformed ONNX protobuf"),
        "{}",
        text(&out.stderr)
    );

    // A verifier error in textual IR names the op and its position.
    let mlir = d.join("bad.mlir");
    std::fs::write(
        &mlir,
        "func.func @f(%a: i32, %b: f32) -> i32 {\n  %0 = arith.addi %a, %a : i32\n  %1 = \"arith.addf\"(%a, %b) : (i32, f32) -> f32\n  return %0 : i32\n}\n",
    )
    .unwrap();
    let out = onnxc(&["opt", mlir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("'arith.addf'") && err.contains("bad.mlir:3"),
        "{err}"
    );
}

#[test]
fn unknown_pass_and_stage_are_diagnostics() {
    let d = dir("unknown");
    let mlir = d.join("ok.mlir");
    std::fs::write(&mlir, "func.func @f() {\n  return\n}\n").unwrap();
    let out = onnxc(&["opt", mlir.to_str().unwrap(), "-p", "no-such-pass"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unknown pass 'no-such-pass'"));
    let model = d.join("mlp.onnx");
    assert!(onnxc(&["zoo", "gen", "mlp", "-o", model.to_str().unwrap()])
        .status
        .success());
    let out = onnxc(&[
        "compile",
        model.to_str().unwrap(),
        "--stop-after",
        "nowhere",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unknown stage 'nowhere'"));
}

#[test]
fn instrumentation_flags_report_per_pass() {
    let d = dir("flags");
    let model = d.join("cnn.onnx");
    assert!(onnxc(&["zoo", "gen", "cnn", "-o", model.to_str().unwrap()])
        .status
        .success());
    let m = model.to_str().unwrap();
    let out = onnxc(&[
        "compile",
        m,
        "--emit",
        "memref",
        "--timing",
        "--stats",
        "--verify-each",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    for pass in [
        "constprop",
        "scrub",
        "bufferize",
        "ownership-based-deallocation",
    ] {
        assert!(err.contains(pass), "timing table lists {pass}:\n{err}");
    }
    assert!(
        err.contains("pass timing report") && err.contains("live constant bytes after constprop")
    );
    assert!(text(&out.stdout).contains("memref.alloc"));

    let out = onnxc(&[
        "compile",
        m,
        "--emit",
        "memref",
        "--print-ir-after",
        "bufferize",
    ]);
    let err = text(&out.stderr);
    assert!(err.contains("IR Dump After bufferize") && !err.contains("IR Dump After constprop"));
    let out = onnxc(&[
        "compile",
        m,
        "--stop-after",
        "scrub",
        "--print-ir-after-all",
    ]);
    let err = text(&out.stderr);
    assert!(err.contains("IR Dump After constprop") && err.contains("IR Dump After scrub"));
}

#[test]
fn opt_emits_llvm_with_a_c_main() {
    let d = dir("main");
    let mlir = d.join("main.mlir");
    std::fs::write(
        &mlir,
        "func.func @main() -> i32 {\n  %c = arith.constant 7 : i32\n  return %c : i32\n}\n",
    )
    .unwrap();
    let out = onnxc(&["opt", mlir.to_str().unwrap(), "--emit", "llvm"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("define i32 @main()"));
}

#[test]
fn writing_to_a_special_file_keeps_it() {
    use std::os::unix::fs::FileTypeExt;
    let d = dir("special-out");
    let model = d.join("mlp.onnx");
    let m = model.to_str().unwrap();
    assert!(onnxc(&["zoo", "gen", "mlp", "-o", m]).status.success());
    // A FIFO stands for /dev/null and friends (not regular files): text
    // output, the streaming fold writer and a native object must write into
    // it, not rename a file over it.
    let fifo = d.join("pipe");
    let f = fifo.to_str().unwrap();
    for args in [
        vec!["compile", m, "--emit", "llvm", "-o", f],
        vec!["fold", m, "-o", f],
        vec!["compile", m, "--emit", "obj", "-o", f],
    ] {
        let _ = std::fs::remove_file(&fifo);
        assert!(Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap().len())
        };
        let out = onnxc(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        // Checked before joining: a reader of a replaced FIFO never returns.
        let ty = std::fs::metadata(&fifo).unwrap().file_type();
        assert!(ty.is_fifo(), "{args:?} replaced the FIFO");
        assert!(
            reader.join().unwrap() > 0,
            "{args:?} wrote nothing into the FIFO"
        );
    }
}
