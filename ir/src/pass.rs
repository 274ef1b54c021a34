//! Pass manager: named passes, pipelines parsed from strings, and
//! instrumentation hooks run around every pass (timing, IR printing,
//! verification, constant GC).

use crate::diag::{Diagnostic, Result};
use crate::module::Module;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What a pass may report besides changing the module.
#[derive(Default, Debug)]
pub struct PassContext {
    /// Non-fatal diagnostics (e.g. a rewrite that did not converge).
    pub warnings: Vec<Diagnostic>,
    /// Named counters (`--stats`), accumulated over the pipeline.
    pub stats: BTreeMap<String, u64>,
}

impl PassContext {
    pub fn bump(&mut self, key: &str, by: u64) {
        *self.stats.entry(key.to_string()).or_default() += by;
    }
}

pub trait Pass: Send + Sync {
    fn name(&self) -> &'static str;
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()>;
}

/// `key=value` options of one pipeline element: `pass{a=1,b=x}`.
#[derive(Default, Debug, Clone)]
pub struct PassOptions(BTreeMap<String, String>);

impl PassOptions {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1" | ""))
    }
    pub fn number(&self, key: &str) -> Result<Option<u64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                Diagnostic::error(format!("option '{key}' expects a number, got '{v}'"))
            }),
        }
    }
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

pub type PassFactory = fn(&PassOptions) -> Result<Box<dyn Pass>>;

pub struct PassInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub create: PassFactory,
}

/// All passes the tools know, by name, plus named pipelines (aliases).
#[derive(Default)]
pub struct PassRegistry {
    passes: BTreeMap<&'static str, PassInfo>,
    pipelines: BTreeMap<&'static str, (&'static str, &'static str)>,
}

impl PassRegistry {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn add(&mut self, info: PassInfo) {
        self.passes.insert(info.name, info);
    }
    /// A name that expands to a pipeline string.
    pub fn add_pipeline(
        &mut self,
        name: &'static str,
        summary: &'static str,
        pipeline: &'static str,
    ) {
        self.pipelines.insert(name, (summary, pipeline));
    }
    pub fn list(&self) -> Vec<(&'static str, &'static str)> {
        let mut out: Vec<_> = self.passes.values().map(|p| (p.name, p.summary)).collect();
        out.extend(self.pipelines.iter().map(|(n, (s, _))| (*n, *s)));
        out.sort();
        out
    }

    /// Parses `a,b{k=v},c` into passes; pipeline names expand in place.
    pub fn parse(&self, pipeline: &str) -> Result<Vec<Box<dyn Pass>>> {
        self.parse_depth(pipeline, 0)
    }

    fn parse_depth(&self, pipeline: &str, depth: usize) -> Result<Vec<Box<dyn Pass>>> {
        if depth > 8 {
            return Err(Diagnostic::error("pipeline aliases nest too deeply"));
        }
        let mut out = Vec::new();
        for item in split_top_level(pipeline)? {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (name, opts) = parse_item(item)?;
            if let Some((_, expansion)) = self.pipelines.get(name) {
                if !opts.0.is_empty() {
                    return Err(Diagnostic::error(format!(
                        "pipeline '{name}' takes no options"
                    )));
                }
                out.extend(self.parse_depth(expansion, depth + 1)?);
                continue;
            }
            let Some(info) = self.passes.get(name) else {
                let known: Vec<&str> = self.list().into_iter().map(|(n, _)| n).collect();
                return Err(Diagnostic::error(format!("unknown pass '{name}'"))
                    .note(format!("known passes: {}", known.join(", "))));
            };
            out.push((info.create)(&opts)?);
        }
        Ok(out)
    }
}

fn split_top_level(s: &str) -> Result<Vec<&str>> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth < 0 {
                    return Err(Diagnostic::error(format!(
                        "unbalanced '}}' in pipeline '{s}'"
                    )));
                }
            }
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(Diagnostic::error(format!(
            "unbalanced '{{' in pipeline '{s}'"
        )));
    }
    parts.push(&s[start..]);
    Ok(parts)
}

fn parse_item(item: &str) -> Result<(&str, PassOptions)> {
    let Some(open) = item.find('{') else {
        return Ok((item, PassOptions::default()));
    };
    let name = item[..open].trim();
    let body = item[open + 1..]
        .strip_suffix('}')
        .ok_or_else(|| Diagnostic::error(format!("malformed pass options in '{item}'")))?;
    let mut opts = BTreeMap::new();
    for kv in body.split([',', ' ']).filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        opts.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok((name, PassOptions(opts)))
}

/// Called around every pass. An error aborts the pipeline.
pub trait Instrumentation {
    fn before_pass(&mut self, _pass: &str, _m: &Module) -> Result<()> {
        Ok(())
    }
    fn after_pass(&mut self, pass: &str, m: &mut Module, elapsed: Duration) -> Result<()>;
}

/// Records wall time per pass; `table()` renders the `--timing` report.
#[derive(Default, Debug)]
pub struct Timing {
    pub rows: Vec<(String, Duration)>,
}

impl Instrumentation for Timing {
    fn after_pass(&mut self, pass: &str, _m: &mut Module, elapsed: Duration) -> Result<()> {
        self.rows.push((pass.to_string(), elapsed));
        Ok(())
    }
}

impl Timing {
    pub fn total(&self) -> Duration {
        self.rows.iter().map(|r| r.1).sum()
    }
    pub fn table(&self) -> String {
        let total = self.total().as_secs_f64().max(1e-12);
        let mut s = String::from("===-------------------------------------------------===\n");
        s += "  pass timing report\n";
        s += &format!("  total: {:.4} s\n", self.total().as_secs_f64());
        s += "===-------------------------------------------------===\n";
        s += "    wall (s)    share  pass\n";
        for (name, d) in &self.rows {
            let secs = d.as_secs_f64();
            s += &format!("  {secs:>10.4}  {:>6.1}%  {name}\n", 100.0 * secs / total);
        }
        s
    }
}

/// Runs the verifier after every pass and names the pass that broke the IR.
pub struct VerifyEach;

impl Instrumentation for VerifyEach {
    fn after_pass(&mut self, pass: &str, m: &mut Module, _elapsed: Duration) -> Result<()> {
        crate::verify::verify(m)
            .map_err(|d| d.note(format!("the IR failed to verify after pass '{pass}'")))
    }
}

/// Receives (pass name, rendered IR).
pub type IrSink = Box<dyn FnMut(&str, &str) + Send>;
/// Receives (pass name, live constant bytes).
pub type GcSink = Box<dyn FnMut(&str, u64) + Send>;

/// Prints the IR after all passes or after the named ones.
pub struct PrintIr {
    /// Empty: after every pass.
    pub only: Vec<String>,
    /// Renders the module (the text printer lives above this module).
    pub render: fn(&Module) -> String,
    pub sink: IrSink,
}

impl Instrumentation for PrintIr {
    fn after_pass(&mut self, pass: &str, m: &mut Module, _elapsed: Duration) -> Result<()> {
        if self.only.is_empty() || self.only.iter().any(|p| p == pass) {
            let text = (self.render)(m);
            (self.sink)(pass, &text);
        }
        Ok(())
    }
}

/// The constants GC: after each pass, compacts the module when enough of it
/// was erased (erased ops have dropped their constants already), then
/// reports live bytes.
pub struct ConstantGc {
    /// Called with (pass, live constant bytes) after each compaction.
    pub on_collect: GcSink,
}

impl Instrumentation for ConstantGc {
    fn after_pass(&mut self, pass: &str, m: &mut Module, _elapsed: Duration) -> Result<()> {
        // Erasing an op already drops its attributes (and the constants
        // they held); compaction only returns the tombstones' memory. On a
        // large module that rebuild costs more than most passes, so it is
        // done once a quarter of the op arena is tombstones.
        if m.erased_ops() * 4 >= m.arena_sizes().0 {
            m.compact();
        }
        (self.on_collect)(pass, crate::elements::live_constant_bytes(m));
        Ok(())
    }
}

/// A pipeline of passes plus the instrumentation around them.
#[derive(Default)]
pub struct PassManager {
    passes: Vec<Box<dyn Pass>>,
    instrumentation: Vec<Box<dyn Instrumentation>>,
    pub cx: PassContext,
}

impl PassManager {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn add(&mut self, pass: Box<dyn Pass>) {
        self.passes.push(pass);
    }
    pub fn extend(&mut self, passes: Vec<Box<dyn Pass>>) {
        self.passes.extend(passes);
    }
    pub fn instrument(&mut self, i: Box<dyn Instrumentation>) {
        self.instrumentation.push(i);
    }
    pub fn pass_names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Runs every pass in order; stops at the first error, or before the
    /// next pass once the thread's compile is cancelled (crate::cancel).
    pub fn run(&mut self, m: &mut Module) -> Result<()> {
        for pass in &self.passes {
            crate::cancel::check()?;
            let name = pass.name();
            let span = tracing::info_span!("pass", name);
            let _guard = span.enter();
            for i in &mut self.instrumentation {
                i.before_pass(name, m)?;
            }
            let start = Instant::now();
            pass.run(m, &mut self.cx)?;
            let elapsed = start.elapsed();
            tracing::debug!(elapsed_us = elapsed.as_micros() as u64, "pass finished");
            for i in &mut self.instrumentation {
                i.after_pass(name, m, elapsed)?;
            }
        }
        Ok(())
    }
}

/// A pass from a plain function (for small passes and tests).
pub struct FnPass {
    pub name: &'static str,
    pub f: fn(&mut Module, &mut PassContext) -> Result<()>,
}

impl Pass for FnPass {
    fn name(&self) -> &'static str {
        self.name
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        (self.f)(m, cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop(_: &mut Module, cx: &mut PassContext) -> Result<()> {
        cx.bump("noop.runs", 1);
        Ok(())
    }

    fn registry() -> PassRegistry {
        let mut r = PassRegistry::new();
        r.add(PassInfo {
            name: "noop",
            summary: "does nothing",
            create: |_| {
                Ok(Box::new(FnPass {
                    name: "noop",
                    f: noop,
                }))
            },
        });
        r.add_pipeline("twice", "noop twice", "noop,noop");
        r
    }

    #[test]
    fn pipelines_parse_and_run() {
        let r = registry();
        let passes = r.parse("noop, twice ,noop{x=1}").unwrap();
        assert_eq!(passes.len(), 4);
        let mut pm = PassManager::new();
        pm.extend(passes);
        pm.instrument(Box::new(VerifyEach));
        let mut m = Module::new();
        pm.run(&mut m).unwrap();
        assert_eq!(pm.cx.stats["noop.runs"], 4);
        assert!(r.parse("nope").is_err());
        assert!(r.parse("noop{").is_err());
    }

    #[test]
    fn options() {
        let (name, o) = parse_item("p{a=1,b=true}").unwrap();
        assert_eq!(name, "p");
        assert_eq!(o.number("a").unwrap(), Some(1));
        assert!(o.flag("b"));
        assert!(o.number("b").is_err());
    }
}
