//! Many compiled models in one executable, for conformance runs: one LLVM
//! module per batch (each model's symbols prefixed) and one C driver that
//! runs every case in a forked child, so a crash or a hang stays one
//! case's failure. One clang call per batch instead of one per model.
//!
//! Driver usage: `prog DIR` runs case `k` on `DIR/k/in_<i>.bin` (packed
//! elements) and writes `DIR/k/out_<i>.bin` in `onnxc run`'s output format
//! (`i64 rank, i64 dims[rank]`, packed elements); it prints one line
//! `case <k> ok|exit <n>|signal <s>` per case.

use crate::cabi::DriverInput;
use crate::llvm::types::elem_size;
use ir::dialects::{func, op_error};
use ir::FuncOp;
use ir::{Diagnostic, Module, Result};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// What the driver needs of one case.
pub struct BatchCase {
    /// The C entry symbol (after prefixing), `void entry(void **, void **)`.
    pub entry: String,
    pub inputs: Vec<DriverInput>,
    /// Rank and element size of each output.
    pub outputs: Vec<(usize, usize)>,
}

/// Output ranks and element sizes of `func_name`'s results.
pub fn output_layout(m: &Module, func_name: &str) -> Result<Vec<(usize, usize)>> {
    let f = m
        .lookup_symbol(func_name)
        .filter(|&f| m.is(f, FuncOp::Func))
        .ok_or_else(|| Diagnostic::error(format!("no function '@{func_name}'")))?;
    let ft =
        func::function_type(m, f).ok_or_else(|| op_error(m, f, "requires a 'function_type'"))?;
    ft.results
        .iter()
        .map(|t| {
            let rank = t.shape().map_or(0, <[i64]>::len);
            let bytes = elem_size(t.element_type()).map_err(|e| op_error(m, f, e))?;
            Ok((rank, usize::try_from(bytes).unwrap_or(8)))
        })
        .collect()
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'$' | b'.' | b'_')
}

/// The global name starting at `s[i] == '@'`: (name, end index).
fn global_at(s: &str, i: usize) -> Option<(&str, usize)> {
    let bytes = s.as_bytes();
    let start = i + 1;
    if bytes.get(start) == Some(&b'"') {
        let close = s[start + 1..].find('"')? + start + 1;
        return Some((&s[start + 1..close], close + 1));
    }
    let mut end = start;
    while end < bytes.len() && is_ident_char(bytes[end]) {
        end += 1;
    }
    (end > start).then(|| (&s[start..end], end))
}

/// Names defined in one LLVM module text (functions and globals).
fn defined_names(ll: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for line in ll.lines() {
        let at = if line.starts_with("define ") {
            line.find('@')
        } else if line.starts_with('@') && !is_external_global(line) && !is_dtors(line) {
            Some(0)
        } else {
            None
        };
        if let Some((name, _)) = at.and_then(|i| global_at(line, i)) {
            out.insert(name.to_string());
        }
    }
    out
}

/// `@x = external global ...`: a declaration (e.g. libc's `@stderr`),
/// shared by all parts, never prefixed.
fn is_external_global(line: &str) -> bool {
    line.starts_with('@') && line.contains(" = external ")
}

/// `@llvm.global_dtors = appending ...`: one per part, merged into one.
fn is_dtors(line: &str) -> bool {
    line.starts_with(DTORS)
}

const DTORS: &str = "@llvm.global_dtors = ";

/// The entries of a `global_dtors` line (`{ i32 P, ptr @f, ptr null }`
/// each, typed), its functions renamed for `prefix`.
fn dtor_entries(line: &str, defs: &HashSet<String>, prefix: &str) -> Vec<String> {
    let mut renamed = String::new();
    rename_line(line, defs, prefix, &mut renamed);
    let mut out = Vec::new();
    let mut rest = renamed.as_str();
    while let Some(i) = rest.find("{ i32 ") {
        let after = &rest[i..];
        let value = after.as_bytes().get(6).is_some_and(u8::is_ascii_digit);
        let end = after.find('}').map_or(after.len(), |e| e + 1);
        if value {
            out.push(format!("{{ i32, ptr, ptr }} {}", &after[..end]));
        }
        rest = &after[end..];
    }
    out
}

/// `line` with every reference to a name of `defs` prefixed.
fn rename_line(line: &str, defs: &HashSet<String>, prefix: &str, out: &mut String) {
    let mut last = 0;
    let mut i = 0;
    let bytes = line.as_bytes();
    let mut in_string = false;
    while i < bytes.len() {
        match bytes[i] {
            // c"..." initializers may hold any byte, including '@'.
            b'"' if i > 0 && bytes[i - 1] == b'c' => in_string = true,
            b'"' if in_string => in_string = false,
            b'@' if !in_string => {
                if let Some((name, end)) = global_at(line, i) {
                    if defs.contains(name) {
                        out.push_str(&line[last..i]);
                        let _ = write!(out, "@\"{prefix}{name}\"");
                        last = end;
                    }
                    i = end;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&line[last..]);
}

/// Merges LLVM module texts into one: every symbol a part defines gets the
/// part's prefix (so `@onnxc_entry` becomes `@"<prefix>onnxc_entry"`),
/// declarations are kept once, headers once.
pub fn merge_llvm(parts: &[(String, String)]) -> Result<String> {
    let mut out = String::from("; batch generated by onnxc\n");
    let mut declared: HashMap<String, String> = HashMap::new();
    let mut decls = String::new();
    let mut triple = None;
    let mut dtors = Vec::new();
    for (prefix, ll) in parts {
        let defs = defined_names(ll);
        for line in ll.lines() {
            if line.starts_with("source_filename") || line.starts_with("; ") {
                continue;
            }
            if is_dtors(line) {
                dtors.extend(dtor_entries(line, &defs, prefix));
                continue;
            }
            if line.starts_with("target ") {
                triple.get_or_insert_with(|| line.to_string());
                continue;
            }
            if line.starts_with("declare ") || is_external_global(line) {
                let name = line
                    .find('@')
                    .and_then(|i| global_at(line, i))
                    .map(|(n, _)| n.to_string())
                    .unwrap_or_default();
                match declared.get(&name) {
                    Some(prev) if prev != line => {
                        return Err(Diagnostic::error(format!(
                            "conflicting declarations of @{name}: '{prev}' and '{line}'"
                        )))
                    }
                    Some(_) => {}
                    None => {
                        declared.insert(name, line.to_string());
                        decls.push_str(line);
                        decls.push('\n');
                    }
                }
                continue;
            }
            rename_line(line, &defs, prefix, &mut out);
            out.push('\n');
        }
    }
    if let Some(t) = triple {
        out.push_str(&t);
        out.push('\n');
    }
    out.push_str(&decls);
    if !dtors.is_empty() {
        let _ = writeln!(
            out,
            "{DTORS}appending global [{} x {{ i32, ptr, ptr }}] [{}]",
            dtors.len(),
            dtors.join(", ")
        );
    }
    Ok(out)
}

/// C source of the batch driver for `cases` (see the module docs).
pub fn batch_driver(cases: &[BatchCase], timeout_secs: u32) -> String {
    let mut s = String::from(PRELUDE);
    s.push_str(crate::cabi::C_FILL_DESC);
    s.push_str(crate::cabi::C_FILE_IO);
    for (k, c) in cases.iter().enumerate() {
        let _ = writeln!(s, "extern void {}(void **ins, void **outs);", c.entry);
        let _ = writeln!(s, "static void case_{k}(const char *dir) {{");
        let _ = writeln!(s, "  char path[4096];");
        crate::cabi::c_inputs(&mut s, &c.inputs, &|i| {
            let setup = format!("  snprintf(path, sizeof path, \"%s/{k}/in_{i}.bin\", dir);\n");
            (setup, "path".into())
        });
        let ranks: Vec<usize> = c.outputs.iter().map(|o| o.0).collect();
        crate::cabi::c_descriptors(&mut s, "  ", "out", "outs", &ranks);
        let _ = writeln!(s, "  {}(ins, outs);", c.entry);
        for (i, (rank, bytes)) in c.outputs.iter().enumerate() {
            let _ = writeln!(
                s,
                "  snprintf(path, sizeof path, \"%s/{k}/out_{i}.bin\", dir);"
            );
            let _ = writeln!(
                s,
                "  if (write_out(path, out{i}, {rank}, {bytes}) != 0) exit(1);"
            );
        }
        s.push_str("}\n\n");
    }
    let _ = writeln!(
        s,
        "static void (*const cases[])(const char *) = {{ {} }};",
        crate::cabi::c_list(cases.len(), "case_")
    );
    let _ = writeln!(s, "#define NCASES {}", cases.len());
    let _ = writeln!(s, "#define TIMEOUT {timeout_secs}");
    s.push_str(MAIN);
    s
}

const PRELUDE: &str = r#"/* batch driver generated by onnxc */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* bf16 truncation, normally from compiler-rt (round to nearest even). */
static uint16_t bf16_bits(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
__bf16 __truncsfbf2(float a) {
  uint32_t u; memcpy(&u, &a, 4);
  uint16_t h = bf16_bits(u); __bf16 r; memcpy(&r, &h, 2); return r;
}
__bf16 __truncdfbf2(double a) { return __truncsfbf2((float)a); }

"#;

const MAIN: &str = r#"
int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: %s DIR\n", argv[0]); return 2; }
  for (int k = 0; k < NCASES; k++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 1; }
    if (pid == 0) {
      alarm(TIMEOUT);
      cases[k](argv[1]);
      fflush(stdout);
      _exit(0);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) < 0) { perror("waitpid"); return 1; }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) printf("case %d ok\n", k);
    else if (WIFEXITED(st)) printf("case %d exit %d\n", k, WEXITSTATUS(st));
    else if (WIFSIGNALED(st)) printf("case %d signal %d\n", k, WTERMSIG(st));
  }
  return 0;
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_prefixes_definitions_and_keeps_one_declaration() {
        let a = "; generated\nsource_filename = \"x\"\n@g = private constant [1 x i8] c\"@g\"\ndefine void @f() {\n  call void @h(ptr @g)\n  ret void\n}\ndeclare void @h(ptr)\n";
        let merged =
            merge_llvm(&[("a_".into(), a.into()), ("b_".into(), a.into())]).unwrap_or_default();
        assert!(merged.contains("@\"a_g\" = private constant [1 x i8] c\"@g\""));
        assert!(merged.contains("define void @\"b_f\"()"));
        assert!(merged.contains("call void @h(ptr @\"b_g\")"));
        assert_eq!(merged.matches("declare void @h").count(), 1);
    }

    #[test]
    fn destructors_of_all_parts_go_in_one_list() {
        let a = "define void @flush() {\n  ret void\n}\n@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @flush, ptr null }]\n";
        let merged =
            merge_llvm(&[("a_".into(), a.into()), ("b_".into(), a.into())]).unwrap_or_default();
        assert_eq!(merged.matches("@llvm.global_dtors").count(), 1, "{merged}");
        assert!(
            merged.contains("appending global [2 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @\"a_flush\", ptr null }, { i32, ptr, ptr } { i32 65535, ptr @\"b_flush\", ptr null }]"),
            "{merged}"
        );
    }

    #[test]
    fn conflicting_declarations_are_an_error() {
        let a = "declare void @h(ptr)\n".to_string();
        let b = "declare i32 @h(ptr)\n".to_string();
        assert!(merge_llvm(&[("a".into(), a), ("b".into(), b)]).is_err());
    }

    #[test]
    fn driver_lists_every_case() {
        let c = BatchCase {
            entry: "x".into(),
            inputs: vec![DriverInput {
                elem_bytes: 4,
                shape: vec![2, 3],
            }],
            outputs: vec![(2, 4)],
        };
        let s = batch_driver(&[c], 5);
        assert!(s.contains("case_0"));
        assert!(s.contains("#define NCASES 1"));
    }
}
