#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! The frontend through the `onnxc` binary: external data on output, and
//! hostile files ending in a diagnostic with exit code 1.

mod frontend_common;

use frontend_common::{python, repo_root};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn onnxc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .args(args)
        .output()
        .expect("run onnxc")
}

fn workdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("frontend-cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An MLP with 64 KiB of weights plus its input in `dir`.
fn mlp(dir: &Path) -> PathBuf {
    let script = "
import sys, os, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
rng = np.random.default_rng(0)
w = numpy_helper.from_array(rng.standard_normal((128, 128)).astype(np.float32), 'w')
b = numpy_helper.from_array(rng.standard_normal(128).astype(np.float32), 'b')
g = helper.make_graph(
    [helper.make_node('MatMul', ['x', 'w'], ['h']), helper.make_node('Add', ['h', 'b'], ['y'])],
    'mlp', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 128])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 128])], [w, b])
onnx.save(helper.make_model(g, ir_version=10, opset_imports=[helper.make_opsetid('', 17)]),
          os.path.join(out, 'model.onnx'))
os.makedirs(os.path.join(out, 'test_data_set_0'), exist_ok=True)
x = numpy_helper.from_array(rng.standard_normal((2, 128)).astype(np.float32), 'x')
open(os.path.join(out, 'test_data_set_0', 'input_0.pb'), 'wb').write(x.SerializeToString())
";
    let out = Command::new(python())
        .arg("-c")
        .arg(script)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("model.onnx")
}

fn assert_same_in_onnxruntime(dir: &Path, original: &Path, other: &Path) {
    let list = dir.join("pairs.tsv");
    std::fs::write(
        &list,
        format!(
            "case\t{}\t{}\t{}\n",
            original.display(),
            other.display(),
            dir.join("test_data_set_0").display()
        ),
    )
    .unwrap();
    let out = Command::new(python())
        .arg(repo_root().join("scripts").join("ort_compare.py"))
        .arg(&list)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\tpass\t"), "{stdout}");
}

#[test]
fn fold_and_compile_write_external_data() {
    let dir = workdir("external");
    let model = mlp(&dir);
    let m = model.to_str().unwrap();
    for (cmd, file) in [("fold", "folded.onnx"), ("compile", "compiled.onnx")] {
        let out_path = dir.join(file);
        let o = out_path.to_str().unwrap();
        let mut args = vec![cmd, m, "-o", o, "--external-data-threshold", "1024"];
        if cmd == "compile" {
            args.extend(["--emit", "onnx"]);
        }
        let r = onnxc(&args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let data = dir.join(format!("{file}.data"));
        // The 64 KiB weight moved out, the 512-byte bias stayed inline.
        assert_eq!(std::fs::metadata(&data).unwrap().len(), 128 * 128 * 4);
        assert!(std::fs::metadata(&out_path).unwrap().len() < 4096);
        assert_same_in_onnxruntime(&dir, &model, &out_path);
    }
    // Without -o there is nowhere to put the data file.
    let r = onnxc(&[
        "compile",
        m,
        "--emit",
        "onnx",
        "--external-data-threshold",
        "1",
    ]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("needs -o"));
}

#[test]
fn hostile_files_exit_with_code_1() {
    let dir = workdir("hostile");
    let model = mlp(&dir);
    let bytes = std::fs::read(&model).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated",
            bytes[..bytes.len() / 2].to_vec(),
            "malformed ONNX protobuf",
        ),
        ("empty", Vec::new(), "empty file"),
        (
            "garbage",
            (0..4096u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect(),
            "error",
        ),
    ];
    for (name, data, expect) in cases {
        let path = dir.join(format!("{name}.onnx"));
        std::fs::write(&path, data).unwrap();
        let r = onnxc(&["compile", path.to_str().unwrap(), "--stop-after", "import"]);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains(expect), "{name}: {stderr}");
        assert!(
            !stderr.contains("internal compiler error"),
            "{name}: {stderr}"
        );
    }
}
