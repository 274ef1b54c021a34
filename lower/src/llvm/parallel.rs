//! Parallel loops on libgomp, GCC's OpenMP runtime (what onnx-mlir's
//! OpenMP lowering ends in). `lower-parallel` leaves a call
//! `@F(lb, ub, step, args...) {onnxc.parallel = N}`; here it becomes
//!
//! ```llvm
//! %team = call i64 @__onnxc_team(i64 %trip, i32 N)   ; threads to use
//! ; team <= 1: call @F(lb, ub, step, args...) directly, else
//! %ctx = alloca { i64, i64, i64, args... }            ; stored operands
//! call void @GOMP_parallel_loop_dynamic(ptr @F.omp, ptr %ctx, i32 %team,
//!     i64 0, i64 %trip, i64 1, i64 %chunk, i32 0)
//! ```
//!
//! `@F.omp(ptr %ctx)`, emitted next to `@F`, loads the operands, then
//! claims chunks of the iterations from libgomp (`GOMP_loop_dynamic_next`)
//! and calls `@F` on each until none is left: a thread that is
//! descheduled (another process on the core) holds up one chunk, not a
//! fixed share, since the others take the rest. A chunk is
//! `ceil(trip / (4 · team))` iterations. `GOMP_parallel_loop_dynamic`
//! returns when every thread is done, so the context can live on the
//! caller's stack.
//!
//! Whether a call gets a team at all is also learned at run time (see
//! `adapt`): a team that kept the caller waiting makes the function (work
//! too small) or the whole module (threads descheduled by another
//! process) run serially for a stretch that doubles with each bad try.
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

/// Chunks of a parallel loop per thread of its team.
const CHUNKS_PER_THREAD: i64 = 4;

/// The most calls a function runs serially before a team tries again
/// (its work too small), and the most parallel calls of the module that
/// run serially before a team tries again (the machine busy).
const MAX_SITE_STRETCH: u32 = 255;
const MAX_MACHINE_STRETCH: u32 = 4095;

/// A wait for the team longer than this is a thread descheduled by
/// another process, not the cost of waking it (ns).
const STALL_NS: i64 = 250_000;

/// `@__onnxc_clock(id)`, nanoseconds of a `clock_gettime` clock.
const CLOCK: &str = "@__onnxc_clock";
const CLOCK_MONOTONIC: i32 = 1;
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

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
    clock_helper(cx.mcx);
    let (site, machine) = (Schedule::site(cx.mcx, callee), Schedule::machine(cx.mcx));
    let site_skip = site.load_skip(cx);
    let machine_skip = machine.load_skip(cx);
    let skips = cx.assign(format!("or i32 {site_skip}, {machine_skip}"));
    let idle = cx.assign(format!("icmp eq i32 {skips}, 0"));
    let wide = cx.assign(format!("icmp sgt i64 {team}, 1"));
    let many = cx.assign(format!("and i1 {wide}, {idle}"));
    let (fork, direct, join) = (cx.label(), cx.label(), cx.label());
    cx.line(format!("br i1 {many}, label %{fork}, label %{direct}"));

    cx.start_block(direct);
    // Serial stretches count down to the next try of a team.
    let dec = cx.assign(format!("zext i1 {wide} to i32"));
    site.count_down(cx, &site_skip, &dec);
    machine.count_down(cx, &machine_skip, &dec);
    let args = call_args(cx, op, callee)?;
    cx.line(format!(
        "call void {}({})",
        global_name(callee),
        args.join(", ")
    ));
    cx.line(format!("br label %{join}"));

    cx.start_block(fork);
    let region = fork_team(cx, op, callee, &trip, &team)?;
    adapt(cx, &site, &machine, &region);
    cx.line(format!("br label %{join}"));
    cx.start_block(join);
    Ok(())
}

/// Runs the call's iterations on a team of `team` threads, which claim
/// chunks dynamically; returns how it went.
fn fork_team(cx: &mut FnCx<'_>, op: OpId, callee: &str, trip: &str, team: &str) -> Result<Region> {
    let m = cx.m;
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
    let st = context_type(&types);
    cx.mcx
        .declare("llvm.stacksave.p0", "declare ptr @llvm.stacksave.p0()");
    cx.mcx.declare(
        "llvm.stackrestore.p0",
        "declare void @llvm.stackrestore.p0(ptr)",
    );
    cx.mcx.declare(
        "GOMP_parallel_loop_dynamic",
        "declare void @GOMP_parallel_loop_dynamic(ptr, ptr, i32, i64, i64, i64, i64, i32)",
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
    // About four chunks per thread: balance without a call per iteration.
    let parts = cx.assign(format!("mul i64 {team}, {CHUNKS_PER_THREAD}"));
    let p1 = cx.assign(format!("sub i64 {parts}, 1"));
    let t1 = cx.assign(format!("add i64 {trip}, {p1}"));
    let chunk = cx.assign(format!("sdiv i64 {t1}, {parts}"));
    let start = cx.assign(format!("call i64 {CLOCK}(i32 {CLOCK_MONOTONIC})"));
    cx.line(format!(
        "call void @GOMP_parallel_loop_dynamic(ptr {tramp}, ptr {ctx}, i32 {team32}, i64 0, i64 {trip}, i64 1, i64 {chunk}, i32 0)"
    ));
    let stop = cx.assign(format!("call i64 {CLOCK}(i32 {CLOCK_MONOTONIC})"));
    let wall = cx.assign(format!("sub i64 {stop}, {start}"));
    let slot = cx.assign(format!(
        "getelementptr inbounds {st}, ptr {ctx}, i32 0, i32 {}",
        types.len()
    ));
    let own = cx.assign(format!("load i64, ptr {slot}"));
    cx.line(format!("call void @llvm.stackrestore.p0(ptr {sp})"));
    Ok(Region { wall, own })
}

/// How a team's run went: its wall time and the CPU time the calling
/// thread spent in chunks (ns).
struct Region {
    wall: String,
    own: String,
}

/// The context a team reads: the call's operands, then the CPU time the
/// calling thread (thread 0) spent in chunks, which it writes.
fn context_type(types: &[String]) -> String {
    format!("{{ {}, i64 }}", types.join(", "))
}

/// When teams run: `skip`, calls left to run serially; `backoff`, the
/// length of the last serial stretch. One per parallel function (shared
/// by its call sites: work too small for a team), one per module (the
/// machine: other processes on the cores).
struct Schedule {
    skip: String,
    backoff: String,
    /// The longest serial stretch.
    cap: u32,
    /// A bad try makes the next stretch `2^growth` times as long.
    growth: u32,
}

impl Schedule {
    fn site(mcx: &mut ModuleCx, callee: &str) -> Schedule {
        Schedule::named(mcx, callee, (MAX_SITE_STRETCH, 1))
    }
    /// Eight times longer per bad try: a busy machine stays busy, and
    /// each try costs a descheduled thread's wait (doubling from one
    /// call, a small model's first twenty calls held five of them).
    fn machine(mcx: &mut ModuleCx) -> Schedule {
        Schedule::named(mcx, "__onnxc_machine", (MAX_MACHINE_STRETCH, 3))
    }
    fn named(mcx: &mut ModuleCx, base: &str, (cap, growth): (u32, u32)) -> Schedule {
        let s = Schedule {
            skip: global_name(&format!("{base}.skip")),
            backoff: global_name(&format!("{base}.backoff")),
            cap,
            growth,
        };
        for g in [&s.skip, &s.backoff] {
            mcx.declare(g, &format!("{g} = internal global i32 0, align 4"));
        }
        s
    }
    fn load_skip(&self, cx: &mut FnCx<'_>) -> String {
        cx.assign(format!(
            "load atomic i32, ptr {} monotonic, align 4",
            self.skip
        ))
    }
    /// `skip - by`, not below 0.
    fn count_down(&self, cx: &mut FnCx<'_>, skip: &str, by: &str) {
        cx.mcx.declare(
            "llvm.usub.sat.i32",
            "declare i32 @llvm.usub.sat.i32(i32, i32)",
        );
        let left = cx.assign(format!("call i32 @llvm.usub.sat.i32(i32 {skip}, i32 {by})"));
        cx.line(format!(
            "store atomic i32 {left}, ptr {} monotonic, align 4",
            self.skip
        ));
    }
    /// After a team ran: `bad`, a serial stretch twice as long as the last
    /// (at most `cap`); `good`, the next one a call shorter (a lucky team
    /// on a busy machine must not undo what the bad ones taught); else the
    /// state stays.
    fn update(&self, cx: &mut FnCx<'_>, bad: &str, good: &str) {
        cx.mcx
            .declare("llvm.umin.i32", "declare i32 @llvm.umin.i32(i32, i32)");
        let last = cx.assign(format!(
            "load atomic i32, ptr {} monotonic, align 4",
            self.backoff
        ));
        let doubled = cx.assign(format!("shl i32 {last}, {}", self.growth));
        let longer = cx.assign(format!("or i32 {doubled}, {}", (1u32 << self.growth) - 1));
        let capped = cx.assign(format!(
            "call i32 @llvm.umin.i32(i32 {longer}, i32 {})",
            self.cap
        ));
        cx.mcx.declare(
            "llvm.usub.sat.i32",
            "declare i32 @llvm.usub.sat.i32(i32, i32)",
        );
        let shorter = cx.assign(format!("call i32 @llvm.usub.sat.i32(i32 {last}, i32 1)"));
        let kept = cx.assign(format!("select i1 {good}, i32 {shorter}, i32 {last}"));
        let backoff = cx.assign(format!("select i1 {bad}, i32 {capped}, i32 {kept}"));
        let skip = cx.assign(format!("select i1 {bad}, i32 {capped}, i32 0"));
        for (g, v) in [(&self.backoff, &backoff), (&self.skip, &skip)] {
            cx.line(format!("store atomic i32 {v}, ptr {g} monotonic, align 4"));
        }
    }
}

/// After a team ran: it went badly when the calling thread spent less
/// than two thirds of the region's wall time working. If it waited
/// longer than a scheduler's time slice is short ([`STALL_NS`]), a thread
/// was descheduled by another process: every parallel call of the module
/// runs serially for a while (the machine is busy). Otherwise the wait
/// was waking the team, which the work did not pay for: the function
/// runs serially for a while. Each stretch is twice as long as the last,
/// and then a team tries again; a team that paid off shortens the next by
/// one call.
fn adapt(cx: &mut FnCx<'_>, site: &Schedule, machine: &Schedule, region: &Region) {
    let worked = cx.assign(format!("mul i64 {}, 3", region.own));
    let span = cx.assign(format!("mul i64 {}, 2", region.wall));
    let lagged = cx.assign(format!("icmp slt i64 {worked}, {span}"));
    let good = cx.assign(format!("xor i1 {lagged}, true"));
    let wait = cx.assign(format!("sub i64 {}, {}", region.wall, region.own));
    let stalled = cx.assign(format!("icmp sge i64 {wait}, {STALL_NS}"));
    let woke = cx.assign(format!("xor i1 {stalled}, true"));
    let small_work = cx.assign(format!("and i1 {lagged}, {woke}"));
    site.update(cx, &small_work, &good);
    let busy = cx.assign(format!("and i1 {lagged}, {stalled}"));
    machine.update(cx, &busy, &good);
}

/// `@__onnxc_clock(i32 id)`: `clock_gettime(id)` in nanoseconds.
fn clock_helper(mcx: &mut ModuleCx) {
    mcx.declare("clock_gettime", "declare i32 @clock_gettime(i32, ptr)");
    mcx.declare(
        CLOCK,
        &format!(
            "define internal i64 {CLOCK}(i32 %id) {{
entry:
  %ts = alloca {{ i64, i64 }}, align 8
  %r = call i32 @clock_gettime(i32 %id, ptr %ts)
  %sp = getelementptr inbounds {{ i64, i64 }}, ptr %ts, i32 0, i32 0
  %np = getelementptr inbounds {{ i64, i64 }}, ptr %ts, i32 0, i32 1
  %s = load i64, ptr %sp
  %n = load i64, ptr %np
  %sn = mul i64 %s, 1000000000
  %t = add i64 %sn, %n
  ret i64 %t
}}"
        ),
    );
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
        (
            "GOMP_loop_dynamic_next",
            "declare zeroext i1 @GOMP_loop_dynamic_next(ptr, ptr)",
        ),
        (
            "GOMP_loop_end_nowait",
            "declare void @GOMP_loop_end_nowait()",
        ),
        ("omp_get_thread_num", "declare i32 @omp_get_thread_num()"),
        ("llvm.smin.i64", "declare i64 @llvm.smin.i64(i64, i64)"),
    ] {
        mcx.declare(sym, decl);
    }
    let st = context_type(&types);
    clock_helper(mcx);
    let mut body = String::from(
        "  %first = alloca i64\n  %end = alloca i64\n  %ran = alloca i64\n  store i64 0, ptr %ran\n\
         \x20 %tid = call i32 @omp_get_thread_num()\n\
         \x20 %caller = icmp eq i32 %tid, 0\n",
    );
    let mut args = Vec::new();
    for (i, t) in types.iter().enumerate() {
        body.push_str(&format!(
            "  %g{i} = getelementptr inbounds {st}, ptr %ctx, i32 0, i32 {i}\n  %a{i} = load {t}, ptr %g{i}\n"
        ));
        args.push(format!("{t} %a{i}"));
    }
    // `noalias` memrefs also pass their aligned pointers.
    let noalias = mcx.noalias.get(name).cloned().unwrap_or_default();
    for i in noalias {
        if let Some(t) = types.get(i) {
            body.push_str(&format!("  %p{i} = extractvalue {t} %a{i}, 1\n"));
            args.push(format!("ptr %p{i}"));
        }
    }
    // Chunk [s, e) of the trip count is iterations [lb + s·step,
    // min(lb + e·step, ub)).
    body.push_str(
        "  br label %next\n\
         next:\n\
         \x20 %more = call zeroext i1 @GOMP_loop_dynamic_next(ptr %first, ptr %end)\n\
         \x20 br i1 %more, label %run, label %done\n\
         run:\n\
         \x20 %s = load i64, ptr %first\n\
         \x20 %e = load i64, ptr %end\n\
         \x20 %o1 = mul i64 %s, %a2\n\
         \x20 %lo = add i64 %a0, %o1\n\
         \x20 %o2 = mul i64 %e, %a2\n\
         \x20 %hi0 = add i64 %a0, %o2\n\
         \x20 %hi = call i64 @llvm.smin.i64(i64 %hi0, i64 %a1)\n\
         \x20 br i1 %caller, label %timed, label %plain\n",
    );
    args[0] = "i64 %lo".into();
    args[1] = "i64 %hi".into();
    let (g, args) = (global_name(name), args.join(", "));
    // Thread 0, the caller, times its chunks in CPU time (see `adapt`).
    body.push_str(&format!(
        "timed:\n\
         \x20 %c0 = call i64 {CLOCK}(i32 {CLOCK_THREAD_CPUTIME_ID})\n\
         \x20 call void {g}({args})\n\
         \x20 %c1 = call i64 {CLOCK}(i32 {CLOCK_THREAD_CPUTIME_ID})\n\
         \x20 %dc = sub i64 %c1, %c0\n\
         \x20 %r0 = load i64, ptr %ran\n\
         \x20 %r1 = add i64 %r0, %dc\n\
         \x20 store i64 %r1, ptr %ran\n\
         \x20 br label %next\n\
         plain:\n\
         \x20 call void {g}({args})\n\
         \x20 br label %next\n"
    ));
    let own = types.len();
    body.push_str(&format!(
        "done:\n\
         \x20 br i1 %caller, label %report, label %end_loop\n\
         report:\n\
         \x20 %own = getelementptr inbounds {st}, ptr %ctx, i32 0, i32 {own}\n\
         \x20 %total = load i64, ptr %ran\n\
         \x20 store i64 %total, ptr %own\n\
         \x20 br label %end_loop\n\
         end_loop:\n\
         \x20 call void @GOMP_loop_end_nowait()\n\
         \x20 ret void\n"
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
