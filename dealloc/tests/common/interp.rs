//! A small interpreter for memref-level functions that checks memory safety
//! the way valgrind would: use after free, double free, freeing memory the
//! function does not own, leaks, and the peak number of live heap buffers.

use ir::attr::Attribute;
use ir::dialects::bufferization::dealloc_groups;
use ir::{BlockId, Module, OpId, Type, ValueId, DYN};
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    I(i64),
    F(f64),
    M(MemVal),
}

#[derive(Clone, Debug, PartialEq)]
pub struct MemVal {
    pub buf: usize,
    pub offset: i64,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Heap,
    Stack,
    Global,
    Arg,
}

#[derive(Debug)]
pub struct Buffer {
    pub data: Vec<f64>,
    pub live: bool,
    pub kind: Kind,
}

pub struct Interp<'m> {
    m: &'m Module,
    pub bufs: Vec<Buffer>,
    globals: HashMap<String, usize>,
    pub live_heap: usize,
    pub peak_heap: usize,
    pub frees: usize,
    steps: usize,
}

enum Flow {
    Yield(Vec<Val>),
    Return(Vec<Val>),
    /// `cf.br` / `cf.cond_br`: the next block and its arguments.
    Branch(BlockId, Vec<Val>),
}

type R<T> = Result<T, String>;

fn row_major(sizes: &[i64]) -> Vec<i64> {
    let mut strides = vec![1; sizes.len()];
    for i in (0..sizes.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * sizes[i + 1];
    }
    strides
}

fn is_int(t: &Type) -> bool {
    t.is_int_or_index()
}

impl<'m> Interp<'m> {
    pub fn new(m: &'m Module) -> Interp<'m> {
        Interp {
            m,
            bufs: Vec::new(),
            globals: HashMap::new(),
            live_heap: 0,
            peak_heap: 0,
            frees: 0,
            steps: 0,
        }
    }

    /// A caller-owned argument buffer of `n` elements holding `fill`.
    pub fn arg_buffer(&mut self, sizes: &[i64], fill: f64) -> Val {
        let n: i64 = sizes.iter().product();
        self.bufs.push(Buffer {
            data: vec![fill; n as usize],
            live: true,
            kind: Kind::Arg,
        });
        Val::M(MemVal {
            buf: self.bufs.len() - 1,
            offset: 0,
            sizes: sizes.to_vec(),
            strides: row_major(sizes),
        })
    }

    fn new_buffer(&mut self, ty: &Type, dyn_sizes: &[i64], kind: Kind) -> R<Val> {
        let mt = ty.as_memref().ok_or("allocating a non-memref")?;
        let mut dyns = dyn_sizes.iter();
        let sizes: Vec<i64> = mt
            .shape
            .iter()
            .map(|&d| {
                if d == DYN {
                    dyns.next().copied().unwrap_or(0)
                } else {
                    d
                }
            })
            .collect();
        let n: i64 = sizes.iter().product();
        self.bufs.push(Buffer {
            data: vec![0.0; n as usize],
            live: true,
            kind,
        });
        if kind == Kind::Heap {
            self.live_heap += 1;
            self.peak_heap = self.peak_heap.max(self.live_heap);
        }
        Ok(Val::M(MemVal {
            buf: self.bufs.len() - 1,
            offset: 0,
            strides: row_major(&sizes),
            sizes,
        }))
    }

    fn free(&mut self, v: &MemVal, what: &str) -> R<()> {
        let b = &mut self.bufs[v.buf];
        if !b.live {
            return Err(format!("{what}: double free of buffer {}", v.buf));
        }
        if b.kind != Kind::Heap {
            return Err(format!("{what}: freeing a {:?} buffer {}", b.kind, v.buf));
        }
        if v.offset != 0 {
            return Err(format!(
                "{what}: freeing an interior pointer of buffer {}",
                v.buf
            ));
        }
        b.live = false;
        self.live_heap -= 1;
        self.frees += 1;
        Ok(())
    }

    /// Calls `name` and then, as the caller, frees every returned buffer
    /// (they must be fresh and distinct). Errors on any leak left behind.
    pub fn run(&mut self, name: &str, args: Vec<Val>) -> R<Vec<Val>> {
        let f = self
            .m
            .lookup_symbol(name)
            .ok_or(format!("no function @{name}"))?;
        let results = self.call(f, args)?;
        let mut seen = Vec::new();
        for v in &results {
            if let Val::M(mv) = v {
                if seen.contains(&mv.buf) {
                    return Err(format!("buffer {} returned twice", mv.buf));
                }
                seen.push(mv.buf);
                self.free(mv, "caller freeing a result")?;
            }
        }
        if self.live_heap != 0 {
            return Err(format!("{} heap buffers leaked", self.live_heap));
        }
        Ok(results)
    }

    /// Element `idx` of a memref (after the buffer's been checked live).
    pub fn read(&self, v: &Val, idx: &[i64]) -> R<f64> {
        let Val::M(mv) = v else {
            return Err("not a memref".into());
        };
        let at = self.addr(mv, idx)?;
        Ok(self.bufs[mv.buf].data[at])
    }

    fn addr(&self, mv: &MemVal, idx: &[i64]) -> R<usize> {
        let b = &self.bufs[mv.buf];
        if !b.live {
            return Err(format!("use after free of buffer {}", mv.buf));
        }
        let at = mv.offset + idx.iter().zip(&mv.strides).map(|(i, s)| i * s).sum::<i64>();
        if at < 0 || at as usize >= b.data.len() {
            return Err(format!("out of bounds access {at} in buffer {}", mv.buf));
        }
        Ok(at as usize)
    }

    pub fn call(&mut self, f: OpId, args: Vec<Val>) -> R<Vec<Val>> {
        let m = self.m;
        let entry = m
            .region(f, 0)
            .and_then(|r| m.entry_block(r))
            .ok_or("declaration")?;
        let mut env = HashMap::new();
        for (&a, v) in m.block_args(entry).iter().zip(args) {
            env.insert(a, v);
        }
        let mut at = entry;
        loop {
            match self.block(at, &mut env)? {
                Flow::Return(v) => return Ok(v),
                Flow::Yield(_) => return Err("function body yielded".into()),
                Flow::Branch(next, vals) => {
                    for (&a, v) in m.block_args(next).iter().zip(vals) {
                        env.insert(a, v);
                    }
                    at = next;
                }
            }
        }
    }

    fn block(&mut self, b: BlockId, env: &mut HashMap<ValueId, Val>) -> R<Flow> {
        let ops: Vec<OpId> = self.m.block_ops(b).collect();
        for op in ops {
            self.steps += 1;
            if self.steps > 50_000_000 {
                return Err("step limit".into());
            }
            if let Some(flow) = self.op(op, env)? {
                return Ok(flow);
            }
        }
        Err("block without terminator".into())
    }

    fn region(
        &mut self,
        r: ir::RegionId,
        args: Vec<Val>,
        env: &mut HashMap<ValueId, Val>,
    ) -> R<Vec<Val>> {
        let b = self.m.entry_block(r).ok_or("empty region")?;
        for (&a, v) in self.m.block_args(b).iter().zip(args) {
            env.insert(a, v);
        }
        match self.block(b, env)? {
            Flow::Yield(v) => Ok(v),
            Flow::Return(_) | Flow::Branch(..) => Err("return or branch inside a region".into()),
        }
    }

    fn op(&mut self, op: OpId, env: &mut HashMap<ValueId, Val>) -> R<Option<Flow>> {
        let m = self.m;
        let name = m.name(op).as_str();
        let ins: Vec<Val> = m
            .operands(op)
            .iter()
            .map(|v| {
                env.get(v)
                    .cloned()
                    .ok_or(format!("{name}: undefined operand"))
            })
            .collect::<R<_>>()?;
        let int = |i: usize| match ins.get(i) {
            Some(Val::I(x)) => Ok(*x),
            other => Err(format!("{name}: operand {i} is not an integer: {other:?}")),
        };
        let flt = |i: usize| match ins.get(i) {
            Some(Val::F(x)) => Ok(*x),
            other => Err(format!("{name}: operand {i} is not a float: {other:?}")),
        };
        let mem = |i: usize| match ins.get(i) {
            Some(Val::M(x)) => Ok(x.clone()),
            other => Err(format!("{name}: operand {i} is not a memref: {other:?}")),
        };
        let rty = m.result(op, 0).map(|r| m.value_type(r).clone());
        let is_i1 = rty.as_ref().is_some_and(|t| *t == Type::i1());
        let norm = |x: i64| if is_i1 { x & 1 } else { x };
        let out: Vec<Val> = match name {
            "func.return" => return Ok(Some(Flow::Return(ins))),
            "scf.yield" => return Ok(Some(Flow::Yield(ins))),
            "cf.br" | "cf.cond_br" => {
                let k = usize::from(name == "cf.cond_br" && int(0)? == 0);
                let (next, range) = m.successor(op, k).ok_or("missing successor")?;
                let vals = ins.get(range).ok_or("bad successor operands")?.to_vec();
                return Ok(Some(Flow::Branch(next, vals)));
            }
            "arith.constant" => vec![match m.attr(op, "value") {
                Some(Attribute::Float(x, _)) => Val::F(*x),
                Some(a) => Val::I(norm(a.as_int().ok_or("bad constant")?)),
                None => return Err("constant without value".into()),
            }],
            "arith.addi" => vec![Val::I(norm(int(0)? + int(1)?))],
            "arith.subi" => vec![Val::I(norm(int(0)? - int(1)?))],
            "arith.muli" => vec![Val::I(norm(int(0)? * int(1)?))],
            "arith.andi" => vec![Val::I(int(0)? & int(1)?)],
            "arith.ori" => vec![Val::I(int(0)? | int(1)?)],
            "arith.xori" => vec![Val::I(norm(int(0)? ^ int(1)?))],
            "arith.addf" => vec![Val::F(flt(0)? + flt(1)?)],
            "arith.mulf" => vec![Val::F(flt(0)? * flt(1)?)],
            "arith.cmpi" => {
                let (a, b) = (int(0)?, int(1)?);
                let p = m
                    .attr(op, "predicate")
                    .and_then(Attribute::as_int)
                    .ok_or("no predicate")?;
                let r = match p {
                    0 => a == b,
                    1 => a != b,
                    2 => a < b,
                    3 => a <= b,
                    4 => a > b,
                    5 => a >= b,
                    6 => (a as u64) < (b as u64),
                    7 => (a as u64) <= (b as u64),
                    8 => (a as u64) > (b as u64),
                    _ => (a as u64) >= (b as u64),
                };
                vec![Val::I(i64::from(r))]
            }
            "arith.select" => vec![if int(0)? & 1 == 1 {
                ins[1].clone()
            } else {
                ins[2].clone()
            }],
            "memref.alloc" | "memref.alloca" => {
                let dyns: Vec<i64> = (0..ins.len()).map(int).collect::<R<_>>()?;
                let kind = if name == "memref.alloc" {
                    Kind::Heap
                } else {
                    Kind::Stack
                };
                vec![self.new_buffer(rty.as_ref().ok_or("no result")?, &dyns, kind)?]
            }
            "memref.realloc" => {
                let src = mem(0)?;
                let dyns: Vec<i64> = (1..ins.len()).map(int).collect::<R<_>>()?;
                let data = self.bufs[src.buf].data.clone();
                self.free(&src, "memref.realloc")?;
                let out = self.new_buffer(rty.as_ref().ok_or("no result")?, &dyns, Kind::Heap)?;
                if let Val::M(mv) = &out {
                    let dst = &mut self.bufs[mv.buf].data;
                    let k = dst.len().min(data.len());
                    dst[..k].copy_from_slice(&data[..k]);
                }
                vec![out]
            }
            "memref.get_global" => {
                let g = m
                    .attr(op, "name")
                    .and_then(Attribute::as_symbol)
                    .ok_or("no name")?
                    .to_string();
                let ty = rty.clone().ok_or("no result")?;
                let buf = match self.globals.get(&g) {
                    Some(&b) => b,
                    None => {
                        let Val::M(mv) = self.new_buffer(&ty, &[], Kind::Global)? else {
                            unreachable!()
                        };
                        self.globals.insert(g, mv.buf);
                        mv.buf
                    }
                };
                let sizes = ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
                vec![Val::M(MemVal {
                    buf,
                    offset: 0,
                    strides: row_major(&sizes),
                    sizes,
                })]
            }
            "memref.dealloc" => {
                self.free(&mem(0)?, "memref.dealloc")?;
                vec![]
            }
            "bufferization.clone" => {
                let src = mem(0)?;
                if !self.bufs[src.buf].live {
                    return Err(format!("clone of freed buffer {}", src.buf));
                }
                let data = self.bufs[src.buf].data.clone();
                self.bufs.push(Buffer {
                    data,
                    live: true,
                    kind: Kind::Heap,
                });
                self.live_heap += 1;
                self.peak_heap = self.peak_heap.max(self.live_heap);
                vec![Val::M(MemVal {
                    buf: self.bufs.len() - 1,
                    ..src
                })]
            }
            "memref.load" => {
                let mv = mem(0)?;
                let idx: Vec<i64> = (1..ins.len()).map(int).collect::<R<_>>()?;
                let x = self.bufs[mv.buf].data[self.addr(&mv, &idx)?];
                let ty = rty.clone().ok_or("no result")?;
                vec![if is_int(&ty) {
                    Val::I(x as i64)
                } else {
                    Val::F(x)
                }]
            }
            "memref.store" => {
                let mv = mem(1)?;
                let idx: Vec<i64> = (2..ins.len()).map(int).collect::<R<_>>()?;
                let at = self.addr(&mv, &idx)?;
                self.bufs[mv.buf].data[at] = match &ins[0] {
                    Val::I(x) => *x as f64,
                    Val::F(x) => *x,
                    Val::M(_) => return Err("storing a memref".into()),
                };
                vec![]
            }
            "memref.cast" => vec![Val::M(mem(0)?)],
            "memref.copy" => {
                let (src, dst) = (mem(0)?, mem(1)?);
                let total: i64 = src.sizes.iter().product();
                for flat in 0..total {
                    let mut idx = vec![0; src.sizes.len()];
                    let mut rem = flat;
                    for k in (0..idx.len()).rev() {
                        idx[k] = rem % src.sizes[k];
                        rem /= src.sizes[k];
                    }
                    let x = self.bufs[src.buf].data[self.addr(&src, &idx)?];
                    let at = self.addr(&dst, &idx)?;
                    self.bufs[dst.buf].data[at] = x;
                }
                vec![]
            }
            "memref.dim" => {
                let mv = mem(0)?;
                vec![Val::I(
                    *mv.sizes.get(int(1)? as usize).ok_or("dim out of range")?,
                )]
            }
            "memref.extract_aligned_pointer_as_index" => {
                vec![Val::I(4096 * (mem(0)?.buf as i64 + 1))]
            }
            "memref.reinterpret_cast" => {
                let src = mem(0)?;
                let mut rest = (1..ins.len()).map(int);
                let mut resolve = |list: Vec<i64>| -> R<Vec<i64>> {
                    list.into_iter()
                        .map(|x| {
                            if x == DYN {
                                rest.next().ok_or("missing operand".to_string())?
                            } else {
                                Ok(x)
                            }
                        })
                        .collect()
                };
                let get = |k: &str| {
                    m.attr(op, k)
                        .and_then(Attribute::as_i64_list)
                        .unwrap_or_default()
                };
                let offset = resolve(get("static_offsets"))?;
                let sizes = resolve(get("static_sizes"))?;
                let strides = resolve(get("static_strides"))?;
                vec![Val::M(MemVal {
                    buf: src.buf,
                    offset: offset.first().copied().unwrap_or(0),
                    sizes,
                    strides,
                })]
            }
            "bufferization.dealloc" => self.dealloc(op, &ins)?,
            "scf.for" => {
                let (lb, ub, step) = (int(0)?, int(1)?, int(2)?);
                let mut iters: Vec<Val> = ins[3..].to_vec();
                let r = m.region(op, 0).ok_or("no body")?;
                let mut i = lb;
                while i < ub {
                    let mut args = vec![Val::I(i)];
                    args.extend(iters);
                    iters = self.region(r, args, env)?;
                    i += step;
                }
                iters
            }
            "scf.if" => {
                let k = if int(0)? & 1 == 1 { 0 } else { 1 };
                match m.region(op, k) {
                    Some(r) if !m.region_blocks(r).is_empty() => self.region(r, vec![], env)?,
                    _ => vec![],
                }
            }
            "func.call" => {
                let callee = m
                    .attr(op, "callee")
                    .and_then(Attribute::as_symbol)
                    .ok_or("no callee")?;
                let f = m.lookup_symbol(callee).ok_or("unknown callee")?;
                self.call(f, ins)?
            }
            "test.use" => {
                // Reads element 0 of every memref operand.
                for v in &ins {
                    if let Val::M(mv) = v {
                        let zeros = vec![0; mv.sizes.len()];
                        self.addr(mv, &zeros)?;
                    }
                }
                vec![]
            }
            other => return Err(format!("interpreter: unsupported op {other}")),
        };
        for (&r, v) in m.results(op).iter().zip(out) {
            env.insert(r, v);
        }
        Ok(None)
    }

    /// `bufferization.dealloc` by its definition.
    fn dealloc(&mut self, op: OpId, ins: &[Val]) -> R<Vec<Val>> {
        let (n, _, r) = dealloc_groups(self.m, op).ok_or("no segments")?;
        let mems: Vec<MemVal> = ins[..n]
            .iter()
            .map(|v| match v {
                Val::M(x) => Ok(x.clone()),
                _ => Err("dealloc of a non-memref".to_string()),
            })
            .collect::<R<_>>()?;
        let conds: Vec<bool> = ins[n..2 * n].iter().map(|v| *v == Val::I(1)).collect();
        let kept: Vec<usize> = ins[2 * n..2 * n + r]
            .iter()
            .map(|v| match v {
                Val::M(x) => Ok(x.buf),
                _ => Err("retaining a non-memref".to_string()),
            })
            .collect::<R<_>>()?;
        let results = kept
            .iter()
            .map(|&k| {
                Val::I(i64::from(
                    mems.iter().zip(&conds).any(|(mv, &c)| c && mv.buf == k),
                ))
            })
            .collect();
        let mut freed = Vec::new();
        for (mv, &c) in mems.iter().zip(&conds) {
            if c && !kept.contains(&mv.buf) && !freed.contains(&mv.buf) {
                freed.push(mv.buf);
                self.free(mv, "bufferization.dealloc")?;
            }
        }
        Ok(results)
    }
}
