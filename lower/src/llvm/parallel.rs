//! Parallel loops on libgomp, GCC's OpenMP runtime (what onnx-mlir's
//! OpenMP lowering ends in). `lower-parallel` leaves a call
//! `@F(lb, ub, step, args...) {onnxc.parallel = N}`; here it becomes
//!
//! ```llvm
//! %team = call i64 @__onnxc_team(i64 %trip, i32 N)   ; threads to use
//! ; team <= 1: call @F(lb, ub, step, args...) directly, else
//! %ctx = alloca { i64, i64, i64, args... }            ; stored operands
//! call void @GOMP_parallel(ptr @F.omp, ptr %ctx, i32 %team, i32 0)
//! ```
//!
//! `@F.omp(ptr %ctx)`, emitted next to `@F`, loads the operands and calls
//! `@F` on its thread's static chunk of the iterations (`ceil(trip /
//! team)` each, by `omp_get_thread_num`). `GOMP_parallel` returns when
//! every thread is done, so the context can live on the caller's stack.
//!
//! `@__onnxc_team(trip, N)` is 1 inside a running parallel region (nested
//! loops run serially on their thread), else `min(trip, threads)` where
//! `threads` is `ONNXC_NUM_THREADS` when set to a positive number, else
//! `N` when positive, else `omp_get_max_threads()` (all cores, or
//! `OMP_NUM_THREADS`). It reads the environment at a thread's first
//! parallel loop and keeps the count in a thread-local variable, so
//! concurrent calls of a model share nothing mutable.

use super::control::call_args;
use super::parts::Item;
use super::types::{global_name, llvm_type};
use super::{FnCx, ModuleCx};
use ir::dialects::{func, op_error, scf};
use ir::{Attribute, Module, OpId, Result};

const TEAM: &str = "@__onnxc_team";

/// The compile-time thread count on a marked call (0: all cores).
fn compiled_threads(m: &Module, op: OpId) -> i64 {
    match m.attr(op, scf::PARALLEL) {
        Some(Attribute::Int(n, _)) => (*n).clamp(0, i64::from(i32::MAX)),
        _ => 0,
    }
}

/// `func.call @__onnxc_num_threads()`: the team a loop of any length
/// started here would get.
pub(crate) fn emit_num_threads(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let r = cx.result(op, 0)?;
    let n = compiled_threads(m, op);
    team_helper(cx.mcx);
    cx.define(r, format!("call i64 {TEAM}(i64 {}, i32 {n})", i64::MAX));
    Ok(())
}

/// A call marked parallel: a team runs it, or the caller does.
pub(crate) fn emit_parallel_call(cx: &mut FnCx<'_>, op: OpId, callee: &str) -> Result<()> {
    let m = cx.m;
    if m.operands(op).len() < 3 || !m.results(op).is_empty() {
        return Err(op_error(
            m,
            op,
            "a parallel call passes (lb, ub, step, ...) and has no results",
        ));
    }
    let (lb, ub, step) = (
        cx.val(cx.operand(op, 0)?)?,
        cx.val(cx.operand(op, 1)?)?,
        cx.val(cx.operand(op, 2)?)?,
    );
    team_helper(cx.mcx);
    let span = cx.assign(format!("sub i64 {ub}, {lb}"));
    let s1 = cx.assign(format!("sub i64 {step}, 1"));
    let num = cx.assign(format!("add i64 {span}, {s1}"));
    let trip = cx.assign(format!("sdiv i64 {num}, {step}"));
    let n = compiled_threads(m, op);
    let team = cx.assign(format!("call i64 {TEAM}(i64 {trip}, i32 {n})"));
    let many = cx.assign(format!("icmp sgt i64 {team}, 1"));
    let (fork, direct, join) = (cx.label(), cx.label(), cx.label());
    cx.line(format!("br i1 {many}, label %{fork}, label %{direct}"));
    let f = global_name(callee);

    cx.start_block(direct);
    let args = call_args(cx, op, callee)?;
    cx.line(format!("call void {f}({})", args.join(", ")));
    cx.line(format!("br label %{join}"));

    cx.start_block(fork);
    let operands = m
        .operands(op)
        .iter()
        .map(|&v| cx.tv(op, v))
        .collect::<Result<Vec<_>>>()?;
    let types = m
        .operands(op)
        .iter()
        .map(|&v| cx.vty(op, v))
        .collect::<Result<Vec<_>>>()?;
    let st = format!("{{ {} }}", types.join(", "));
    cx.mcx
        .declare("llvm.stacksave.p0", "declare ptr @llvm.stacksave.p0()");
    cx.mcx.declare(
        "llvm.stackrestore.p0",
        "declare void @llvm.stackrestore.p0(ptr)",
    );
    cx.mcx.declare(
        "GOMP_parallel",
        "declare void @GOMP_parallel(ptr, ptr, i32, i32)",
    );
    // The context lives for the call only: no stack growth in a loop.
    let sp = cx.assign("call ptr @llvm.stacksave.p0()");
    let ctx = cx.assign(format!("alloca {st}, align 16"));
    for (i, tv) in operands.iter().enumerate() {
        let g = cx.assign(format!(
            "getelementptr inbounds {st}, ptr {ctx}, i32 0, i32 {i}"
        ));
        cx.line(format!("store {tv}, ptr {g}"));
    }
    let team32 = cx.assign(format!("trunc i64 {team} to i32"));
    let tramp = global_name(&format!("{callee}.omp"));
    cx.line(format!(
        "call void @GOMP_parallel(ptr {tramp}, ptr {ctx}, i32 {team32}, i32 0)"
    ));
    cx.line(format!("call void @llvm.stackrestore.p0(ptr {sp})"));
    cx.line(format!("br label %{join}"));
    cx.start_block(join);
    Ok(())
}

/// `@F.omp(ptr %ctx)` for a function made by `lower-parallel`: the code
/// each thread of the team runs.
pub(crate) fn trampoline(m: &Module, f: OpId, mcx: &mut ModuleCx) -> Result<Item> {
    let name = func::sym_name(m, f).ok_or_else(|| op_error(m, f, "requires a 'sym_name'"))?;
    let ft =
        func::function_type(m, f).ok_or_else(|| op_error(m, f, "requires a 'function_type'"))?;
    let types = ft
        .inputs
        .iter()
        .map(|t| llvm_type(t).map_err(|e| op_error(m, f, e)))
        .collect::<Result<Vec<_>>>()?;
    if types.len() < 3 || types[..3].iter().any(|t| t != "i64") {
        return Err(op_error(m, f, "a parallel body takes (lb, ub, step, ...)"));
    }
    for (sym, decl) in [
        ("omp_get_thread_num", "declare i32 @omp_get_thread_num()"),
        ("omp_get_num_threads", "declare i32 @omp_get_num_threads()"),
        ("llvm.smin.i64", "declare i64 @llvm.smin.i64(i64, i64)"),
    ] {
        mcx.declare(sym, decl);
    }
    let st = format!("{{ {} }}", types.join(", "));
    let mut body = String::new();
    let mut args = Vec::new();
    for (i, t) in types.iter().enumerate() {
        body.push_str(&format!(
            "  %g{i} = getelementptr inbounds {st}, ptr %ctx, i32 0, i32 {i}\n  %a{i} = load {t}, ptr %g{i}\n"
        ));
        args.push(format!("{t} %a{i}"));
    }
    // Static chunks: thread t runs iterations [t·c, min((t+1)·c, trip)).
    body.push_str(
        "  %tid32 = call i32 @omp_get_thread_num()\n\
         \x20 %nth32 = call i32 @omp_get_num_threads()\n\
         \x20 %tid = sext i32 %tid32 to i64\n\
         \x20 %nth = sext i32 %nth32 to i64\n\
         \x20 %span = sub i64 %a1, %a0\n\
         \x20 %s1 = sub i64 %a2, 1\n\
         \x20 %num = add i64 %span, %s1\n\
         \x20 %trip = sdiv i64 %num, %a2\n\
         \x20 %n1 = sub i64 %nth, 1\n\
         \x20 %cn = add i64 %trip, %n1\n\
         \x20 %chunk = sdiv i64 %cn, %nth\n\
         \x20 %first = mul i64 %tid, %chunk\n\
         \x20 %end = add i64 %first, %chunk\n\
         \x20 %last = call i64 @llvm.smin.i64(i64 %end, i64 %trip)\n\
         \x20 %o1 = mul i64 %first, %a2\n\
         \x20 %lo = add i64 %a0, %o1\n\
         \x20 %o2 = mul i64 %last, %a2\n\
         \x20 %hi0 = add i64 %a0, %o2\n\
         \x20 %hi = call i64 @llvm.smin.i64(i64 %hi0, i64 %a1)\n",
    );
    args[0] = "i64 %lo".into();
    args[1] = "i64 %hi".into();
    // `noalias` memrefs also pass their aligned pointers.
    let noalias = mcx.noalias.get(name).cloned().unwrap_or_default();
    for i in noalias {
        if let Some(t) = types.get(i) {
            body.push_str(&format!("  %p{i} = extractvalue {t} %a{i}, 1\n"));
            args.push(format!("ptr %p{i}"));
        }
    }
    let g = global_name(name);
    body.push_str(&format!(
        "  call void {g}({})\n  ret void\n",
        args.join(", ")
    ));
    let tramp = global_name(&format!("{name}.omp"));
    Ok(Item {
        before: "define ".into(),
        internal: true,
        after: format!("void {tramp}(ptr %ctx) {{\nentry:\n{body}}}\n\n"),
        decl: Some(format!("declare hidden void {tramp}(ptr)")),
    })
}

/// Defines `@__onnxc_team` (see the module docs) once per module.
fn team_helper(mcx: &mut ModuleCx) {
    if mcx.team_helper {
        return;
    }
    mcx.team_helper = true;
    let var = mcx.string(b"ONNXC_NUM_THREADS");
    for (sym, decl) in [
        ("omp_in_parallel", "declare i32 @omp_in_parallel()"),
        ("omp_get_max_threads", "declare i32 @omp_get_max_threads()"),
        ("getenv", "declare ptr @getenv(ptr)"),
        ("strtol", "declare i64 @strtol(ptr, ptr, i32)"),
        ("llvm.smin.i64", "declare i64 @llvm.smin.i64(i64, i64)"),
        (
            "llvm.threadlocal.address.p0",
            "declare ptr @llvm.threadlocal.address.p0(ptr)",
        ),
    ] {
        mcx.declare(sym, decl);
    }
    mcx.helpers.push(format!(
        "@__onnxc_threads = internal thread_local global i32 0

define internal i64 {TEAM}(i64 %trip, i32 %compiled) {{
entry:
  %inpar = call i32 @omp_in_parallel()
  %nested = icmp ne i32 %inpar, 0
  br i1 %nested, label %one, label %top
one:
  ret i64 1
top:
  %slot = call ptr @llvm.threadlocal.address.p0(ptr @__onnxc_threads)
  %c = load i32, ptr %slot
  %known = icmp sgt i32 %c, 0
  br i1 %known, label %have, label %read
read:
  %e = call ptr @getenv(ptr {var})
  %unset = icmp eq ptr %e, null
  br i1 %unset, label %dflt, label %parse
parse:
  %v = call i64 @strtol(ptr %e, ptr null, i32 10)
  %ok = icmp sgt i64 %v, 0
  %v1 = call i64 @llvm.smin.i64(i64 %v, i64 4096)
  %v2 = trunc i64 %v1 to i32
  br i1 %ok, label %set, label %dflt
dflt:
  %given = icmp sgt i32 %compiled, 0
  %all = call i32 @omp_get_max_threads()
  %d = select i1 %given, i32 %compiled, i32 %all
  br label %set
set:
  %n = phi i32 [ %v2, %parse ], [ %d, %dflt ]
  store i32 %n, ptr %slot
  br label %have
have:
  %t = phi i32 [ %c, %top ], [ %n, %set ]
  %t64 = sext i32 %t to i64
  %r = call i64 @llvm.smin.i64(i64 %t64, i64 %trip)
  ret i64 %r
}}
"
    ));
}
