//! A block of `onnx.*` ops → `GraphProto`: block arguments are the graph
//! inputs, constants its initializers, the terminator's operands its
//! outputs; regions of `If`/`Loop`/`Scan` become subgraph attributes.

use super::attr::{attribute, value_info};
use super::denormalize::{is_none, legacy_attrs, moved_back, operand_attr, retyped, LegacyAttrs};
use super::external::External;
use crate::dialect::{region_attr_names, DOC_ATTR, GRAPHS_ATTR, NAMES_ATTR};
use crate::forms::{self, Form, Role};
use crate::import::tensor::{dtype_to_onnx, elements_to_tensor};
use crate::proto::{
    attribute_proto::AttributeType, AttributeProto, GraphProto, NodeProto, TensorProto,
};
use ir::attr::Attribute;
use ir::dialects::op_error;
use ir::elements::Elements;
use ir::entity::SecondaryMap;
use ir::{BlockId, Diagnostic, Location, Module, OpId, Result, ValueDef, ValueId};
use onnx::{ops, Domain, OpKind};
use std::collections::{HashMap, HashSet};

/// Names values uniquely over the whole model, preferring the name they
/// came with.
#[derive(Default)]
struct Names {
    /// The name of each value written so far ("" for an omitted input).
    of: SecondaryMap<ValueId, Option<String>>,
    taken: HashSet<String>,
    /// Next suffix to try per base name (keeps many clashes linear).
    next: HashMap<String, usize>,
}

impl Names {
    /// A fresh name, `wanted` if it is free, else `wanted_K`.
    fn fresh(&mut self, wanted: &str) -> String {
        let base = if wanted.is_empty() { "v" } else { wanted };
        let mut name = base.to_string();
        if self.taken.contains(&name) {
            let k = self.next.entry(base.to_string()).or_insert(0);
            loop {
                *k += 1;
                name = format!("{base}_{k}");
                if !self.taken.contains(&name) {
                    break;
                }
            }
        }
        self.taken.insert(name.clone());
        name
    }
    fn claim(&mut self, v: ValueId, wanted: &str) -> String {
        let name = self.fresh(wanted);
        self.of.set(v, Some(name.clone()));
        name
    }
    fn get(&self, v: ValueId) -> Option<String> {
        self.of.get(v).clone()
    }
}

/// Names a region's subgraph was imported with (`onnx.graphs`).
#[derive(Default)]
pub struct GraphNames {
    pub name: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

fn strings(a: Option<&Attribute>) -> Vec<String> {
    a.and_then(Attribute::as_array)
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

impl GraphNames {
    fn of_region(m: &Module, op: OpId, i: usize) -> GraphNames {
        let Some(Attribute::Dict(d)) = m
            .attr(op, GRAPHS_ATTR)
            .and_then(Attribute::as_array)
            .and_then(|a| a.get(i))
        else {
            return GraphNames::default();
        };
        let get = |k: &str| d.iter().find(|(s, _)| s.as_str() == k).map(|(_, v)| v);
        GraphNames {
            name: get("name")
                .and_then(Attribute::as_str)
                .unwrap_or("")
                .to_string(),
            inputs: strings(get("inputs")),
            outputs: strings(get("outputs")),
        }
    }
}

fn loc_name(m: &Module, op: OpId) -> String {
    match m.loc(op) {
        Location::Name(n) => n.to_string(),
        _ => String::new(),
    }
}

/// The ONNX name result `i` of `op` was imported with ("" when unknown).
fn stored_name(m: &Module, op: OpId, i: usize) -> String {
    match m.attr(op, NAMES_ATTR) {
        Some(a) => strings(Some(a)).get(i).cloned().unwrap_or_default(),
        None if m.results(op).len() == 1 => loc_name(m, op),
        None => String::new(),
    }
}

pub struct Exporter<'m> {
    pub m: &'m Module,
    names: Names,
    /// Node names, unique over the model as ONNX requires (ops a rewrite
    /// made from one op share its location).
    node_names: Names,
    pub uses_ml: bool,
    /// Whether a `com.microsoft` op was written.
    pub uses_microsoft: bool,
    pub external: Option<External>,
    /// Opset of the default domain the model is written for.
    opset: i64,
    /// Per op, a bit per operand slot written back as an attribute (old
    /// opsets).
    moved: SecondaryMap<OpId, u32>,
    /// Main-graph initializers of at least this many bytes are left
    /// without data, for the caller to write (streaming).
    pub defer_min: Option<usize>,
    /// (initializer index, values) of those.
    pub deferred: Vec<(usize, Elements)>,
    /// Graph nesting: 1 while exporting the main graph.
    depth: usize,
    /// Graph output names taken before any value is named, so that no
    /// other value (a constant named after the node it was folded from)
    /// takes one: each goes to the value computed here as that output, or
    /// (`None`) to the Identity that outputs it.
    reserved: HashMap<String, Option<ValueId>>,
}

impl<'m> Exporter<'m> {
    pub fn new(m: &'m Module, external: Option<External>, opset: i64) -> Self {
        let mut moved = SecondaryMap::default();
        for op in m.collect_ops(m.top()) {
            let Some(kind) = OpKind::of(m, op) else {
                continue;
            };
            for (i, ..) in moved_back(kind, &forms::of(kind), opset) {
                *moved.entry(op) |= 1u32.checked_shl(i as u32).unwrap_or(0);
            }
        }
        Exporter {
            m,
            names: Names::default(),
            node_names: Names::default(),
            uses_ml: false,
            uses_microsoft: false,
            external,
            opset,
            moved,
            defer_min: None,
            deferred: Vec::new(),
            depth: 0,
            reserved: HashMap::new(),
        }
    }

    /// Exports `block` (ended by `func.return` or `onnx.Yield`) as a graph.
    pub fn graph(&mut self, owner: OpId, block: BlockId, info: &GraphNames) -> Result<GraphProto> {
        self.depth += 1;
        let g = self.graph_body(owner, block, info);
        self.depth -= 1;
        g
    }

    fn graph_body(&mut self, owner: OpId, block: BlockId, info: &GraphNames) -> Result<GraphProto> {
        let m = self.m;
        let term = m
            .last_op(block)
            .filter(|&t| m.is(t, "func.return") || onnx::is(m, t, OpKind::Yield))
            .ok_or_else(|| {
                op_error(m, owner, "body does not end with func.return or onnx.Yield")
            })?;
        let mut graph = GraphProto {
            name: info.name.clone(),
            ..GraphProto::default()
        };
        for (i, &a) in m.block_args(block).iter().enumerate() {
            let wanted = info
                .inputs
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("input_{i}"));
            let name = self.names.claim(a, &wanted);
            graph
                .input
                .push(value_info(m, owner, &name, m.value_type(a))?);
        }
        // Returned results take the output's name (see `result_name`).
        let mut preferred: HashMap<ValueId, String> = HashMap::new();
        for (j, &v) in m.operands(term).iter().enumerate() {
            let Some(out) = info.outputs.get(j) else {
                continue;
            };
            let local = m
                .defining_op(v)
                .is_some_and(|d| m.op_block(d) == Some(block) && !onnx::is(m, d, OpKind::Constant));
            let first = !preferred.contains_key(&v);
            if self.names.taken.insert(out.clone()) {
                self.reserved
                    .insert(out.clone(), (local && first).then_some(v));
            }
            preferred.entry(v).or_insert_with(|| out.clone());
        }
        for op in m.block_ops(block) {
            ir::cancel::check()?;
            if op != term {
                self.op(op, &preferred, &mut graph)?;
            }
        }
        self.outputs(block, term, info, &mut graph)?;
        // Outputs declare their types themselves.
        let outs: HashSet<&str> = graph.output.iter().map(|o| o.name.as_str()).collect();
        let value_info = std::mem::take(&mut graph.value_info);
        graph.value_info = value_info
            .into_iter()
            .filter(|v| !outs.contains(v.name.as_str()))
            .collect();
        Ok(graph)
    }

    /// Names `v` `wanted`, or a fresh variant of it; a reserved output name
    /// goes only to the value it is reserved for.
    fn claim(&mut self, v: ValueId, wanted: &str) -> String {
        if self.reserved.get(wanted) == Some(&Some(v)) {
            self.reserved.remove(wanted);
            self.names.of.set(v, Some(wanted.to_string()));
            return wanted.to_string();
        }
        self.names.claim(v, wanted)
    }

    /// Whether operand `index` of `op` is written back as an attribute.
    fn is_moved(&self, op: OpId, index: u32) -> bool {
        self.moved.get(op) & 1u32.checked_shl(index).unwrap_or(0) != 0
    }

    fn op(
        &mut self,
        op: OpId,
        preferred: &HashMap<ValueId, String>,
        graph: &mut GraphProto,
    ) -> Result<()> {
        let m = self.m;
        let kind =
            OpKind::of(m, op).ok_or_else(|| op_error(m, op, "cannot be exported to ONNX"))?;
        let form = forms::of(kind);
        match form.role {
            Role::Omitted => {
                for &r in m.results(op) {
                    self.names.of.set(r, Some(String::new()));
                }
                Ok(())
            }
            Role::Constant => self.initializer(op, preferred, graph),
            Role::Outputs => Err(op_error(m, op, "does not end its graph")),
            Role::Node | Role::Regions => self.node(op, kind, &form, preferred, graph),
            Role::Foreign => self.foreign(op, &form, preferred, graph),
        }
    }

    /// An `onnx.Foreign` as the node it was imported from, its inputs,
    /// outputs and the outer names its subgraphs use named as now.
    fn foreign(
        &mut self,
        op: OpId,
        form: &Form,
        preferred: &HashMap<ValueId, String>,
        graph: &mut GraphProto,
    ) -> Result<()> {
        let m = self.m;
        let mut node = match m.attr(op, "node") {
            Some(Attribute::Elements(e)) => crate::foreign::node_of_payload(e),
            _ => None,
        }
        .ok_or_else(|| op_error(m, op, "holds no encoded node"))?;
        let captured = strings(m.attr(op, "captures"));
        let operands = m.operands(op);
        let explicit = operands
            .len()
            .checked_sub(captured.len())
            .ok_or_else(|| op_error(m, op, "has fewer operands than captured names"))?;
        let (inputs, captures) = operands.split_at(explicit);
        node.name = match loc_name(m, op) {
            n if n.is_empty() => n,
            n => self.node_names.fresh(&n),
        };
        self.input_names(op, inputs, &mut node)?;
        let mut renames = HashMap::new();
        for (old, &v) in captured.iter().zip(captures) {
            let new = self
                .names
                .get(v)
                .ok_or_else(|| op_error(m, op, "uses a value that is not visible in its graph"))?;
            if *old != new {
                renames.insert(old.clone(), new);
            }
        }
        crate::foreign::rename_captures(&mut node, &renames);
        self.results(op, form, preferred, &mut node, graph);
        let initializer = m.attr(op, "initializer").and_then(Attribute::as_int) == Some(1);
        match (initializer, node.attribute.first_mut(), node.output.first()) {
            (true, Some(AttributeProto { t: Some(t), .. }), Some(name)) => {
                let mut t = std::mem::take(t);
                t.name.clone_from(name);
                graph.initializer.push(t);
            }
            _ => graph.node.push(node),
        }
        Ok(())
    }

    /// The name result `i` of `op` gets. A node's result returned as a
    /// graph output takes the output's name (folding may have removed the
    /// node that produced it, and an `Identity` would rename it back);
    /// otherwise the name it was imported with, else the output's.
    fn result_name(
        &self,
        op: OpId,
        i: usize,
        v: ValueId,
        preferred: &HashMap<ValueId, String>,
    ) -> Option<String> {
        let returned = preferred.get(&v);
        if let (Some(out), false) = (returned, onnx::is(self.m, op, OpKind::Constant)) {
            return Some(out.clone());
        }
        let stored = stored_name(self.m, op, i);
        if !stored.is_empty() {
            return Some(stored);
        }
        returned.cloned()
    }

    /// An `onnx.Constant` as an initializer (inline, external, or left
    /// without data for a streaming writer).
    fn initializer(
        &mut self,
        op: OpId,
        preferred: &HashMap<ValueId, String>,
        graph: &mut GraphProto,
    ) -> Result<()> {
        let m = self.m;
        let (Some(&r), Some(e)) = (m.results(op).first(), ops::Constant::of(m, op).value()) else {
            return Err(op_error(m, op, "requires a dense 'value'"));
        };
        let uses = m.uses(r);
        if !uses.is_empty() && uses.iter().all(|u| self.is_moved(u.op, u.index)) {
            return Ok(()); // only feeds attributes of old opsets
        }
        let wanted = self
            .result_name(op, 0, r, preferred)
            .unwrap_or_else(|| loc_name(m, op));
        let n = self.claim(r, &wanted);
        let bytes = e.dtype().storage_bytes(e.len()).unwrap_or(0);
        let bare = |name: String| TensorProto {
            name,
            dims: e.shape().to_vec(),
            data_type: dtype_to_onnx(e.dtype()),
            ..TensorProto::default()
        };
        let t = match &mut self.external {
            _ if self.depth == 1 && self.defer_min.is_some_and(|d| bytes >= d.max(1)) => {
                self.deferred.push((graph.initializer.len(), e.clone()));
                bare(n)
            }
            Some(ext) if ext.wants(e) => {
                let mut t = bare(n);
                ext.place(&mut t, e);
                t
            }
            _ => elements_to_tensor(&n, e),
        };
        graph.initializer.push(t);
        Ok(())
    }

    /// An op as a node: inputs (some written back as attributes for old
    /// opsets), outputs, attributes, subgraphs.
    fn node(
        &mut self,
        op: OpId,
        kind: OpKind,
        form: &Form,
        preferred: &HashMap<ValueId, String>,
        graph: &mut GraphProto,
    ) -> Result<()> {
        let m = self.m;
        // Only the default domain has older forms written back.
        let opset = match kind.domain() {
            Domain::OnnxMl => {
                self.uses_ml = true;
                None
            }
            Domain::Microsoft => {
                self.uses_microsoft = true;
                None
            }
            Domain::Onnx | Domain::Internal => Some(self.opset),
        };
        let name = match loc_name(m, op) {
            n if n.is_empty() => n,
            n => self.node_names.fresh(&n),
        };
        let mut node = NodeProto {
            name,
            op_type: kind.name().to_string(),
            domain: kind.domain().model_name().to_string(),
            ..NodeProto::default()
        };
        if let Some(opset) = opset {
            self.moved_inputs(op, kind, form, opset, &mut node)?;
        } else {
            self.inputs(op, &mut node)?;
        }
        self.results(op, form, preferred, &mut node, graph);
        let legacy = match opset {
            Some(opset) => legacy_attrs(m, op, form.legacy, opset)?,
            None => LegacyAttrs::default(),
        };
        for (k, a) in m.attrs(op) {
            let k = k.as_str();
            if k.starts_with("onnx.") || legacy.skip.contains(&k) {
                continue;
            }
            node.attribute.push(attribute(m, op, k, a)?);
        }
        for (k, a) in &legacy.add {
            node.attribute.push(attribute(m, op, k, a)?);
        }
        for (k, a) in onnx::dialect::extra_attrs(m, op) {
            node.attribute.push(attribute(m, op, k, a)?);
        }
        if let Some(doc) = m.attr(op, DOC_ATTR).and_then(Attribute::as_str) {
            node.doc_string = doc.to_string();
        }
        self.regions(op, kind, &mut node)?;
        graph.node.push(node);
        Ok(())
    }

    /// The node's inputs by name, trailing omitted ones dropped.
    fn inputs(&self, op: OpId, node: &mut NodeProto) -> Result<()> {
        self.input_names(op, self.m.operands(op), node)
    }

    /// `values` as the node's inputs, trailing omitted ones dropped.
    fn input_names(&self, op: OpId, values: &[ValueId], node: &mut NodeProto) -> Result<()> {
        let m = self.m;
        for &v in values {
            let n = self
                .names
                .get(v)
                .ok_or_else(|| op_error(m, op, "uses a value that is not visible in its graph"))?;
            node.input.push(n);
        }
        while node.input.last().is_some_and(String::is_empty) {
            node.input.pop();
        }
        Ok(())
    }

    /// Inputs at `opset`: operands that were attributes then are written
    /// as attributes; operands the older form lacks must be absent.
    fn moved_inputs(
        &self,
        op: OpId,
        kind: OpKind,
        form: &Form,
        opset: i64,
        node: &mut NodeProto,
    ) -> Result<()> {
        let m = self.m;
        let moved = moved_back(kind, form, opset);
        if moved.is_empty() {
            return self.inputs(op, node);
        }
        let mut kept = Vec::new();
        for (i, &v) in m.operands(op).iter().enumerate() {
            if let Some(&(_, name, attr_kind)) = moved.iter().find(|(j, ..)| *j == i) {
                if let Some(a) = operand_attr(m, op, v, name, attr_kind, opset)? {
                    node.attribute.push(attribute(m, op, name, &a)?);
                }
                continue;
            }
            if i >= form.old_operands && !is_none(m, v) {
                return Err(op_error(
                    m,
                    op,
                    format!("operand #{i} has no form in opset {opset}"),
                ));
            }
            kept.push(v);
        }
        for v in kept {
            let n = self
                .names
                .get(v)
                .ok_or_else(|| op_error(m, op, "uses a value that is not visible in its graph"))?;
            node.input.push(n);
        }
        while node.input.last().is_some_and(String::is_empty) {
            node.input.pop();
        }
        Ok(())
    }

    /// Names the results; the inferred type of each used intermediate
    /// value goes to `value_info` (outputs are filtered out once the
    /// graph's outputs are known).
    fn results(
        &mut self,
        op: OpId,
        form: &Form,
        preferred: &HashMap<ValueId, String>,
        node: &mut NodeProto,
        graph: &mut GraphProto,
    ) {
        let m = self.m;
        let results = m.results(op);
        for (i, &r) in results.iter().enumerate() {
            let n = match self.result_name(op, i, r, preferred) {
                Some(n) => self.claim(r, &n),
                // An omitted optional output stays omitted while unused.
                None if m.attr(op, NAMES_ATTR).is_some() && !m.has_uses(r) => String::new(),
                None if results.len() == 1 => self.names.claim(r, &node.name),
                None => self.names.claim(r, &format!("{}:{i}", node.name)),
            };
            if !n.is_empty() && m.has_uses(r) && !retyped(form.legacy, i, self.opset) {
                if let Ok(vi) = value_info(m, op, &n, m.value_type(r)) {
                    if vi.r#type.is_some() {
                        graph.value_info.push(vi);
                    }
                }
            }
            node.output.push(n);
        }
    }

    /// The op's regions as its graph attributes.
    fn regions(&mut self, op: OpId, kind: OpKind, node: &mut NodeProto) -> Result<()> {
        let m = self.m;
        let attr_names = region_attr_names(kind);
        for (i, &region) in m.regions(op).iter().enumerate() {
            let name = attr_names.get(i).ok_or_else(|| {
                op_error(m, op, "has a region that has no ONNX subgraph attribute")
            })?;
            let block = m
                .entry_block(region)
                .ok_or_else(|| op_error(m, op, "has an empty region"))?;
            let info = GraphNames::of_region(m, op, i);
            let g = self.graph(op, block, &info)?;
            node.attribute.push(AttributeProto {
                name: name.to_string(),
                r#type: AttributeType::Graph as i32,
                g: Some(g),
                ..AttributeProto::default()
            });
        }
        Ok(())
    }

    /// Graph outputs; values not defined here under the wanted name (inputs
    /// of the main graph, captures, values returned twice) go through an
    /// `Identity`.
    fn outputs(
        &mut self,
        block: BlockId,
        term: OpId,
        info: &GraphNames,
        graph: &mut GraphProto,
    ) -> Result<()> {
        let m = self.m;
        let mut done = HashSet::new();
        for (j, &v) in m.operands(term).iter().enumerate() {
            let wanted = info
                .outputs
                .get(j)
                .cloned()
                .unwrap_or_else(|| format!("output_{j}"));
            let current = self.names.get(v).ok_or_else(|| {
                Diagnostic::error(format!("graph output '{wanted}' has no value"))
            })?;
            let local = match m.value_def(v) {
                // Initializers as outputs confuse some runtimes.
                ValueDef::Result(d, _) => {
                    m.op_block(d) == Some(block) && !onnx::is(m, d, OpKind::Constant)
                }
                ValueDef::BlockArg(b, _) => b == block,
                ValueDef::Erased => false,
            };
            let name = if current == wanted && local && done.insert(current.clone()) {
                current
            } else {
                let out = match self.reserved.remove(&wanted) {
                    Some(_) => wanted.clone(),
                    None => self.names.fresh(&wanted),
                };
                done.insert(out.clone());
                graph.node.push(NodeProto {
                    name: self.node_names.fresh(&format!("{out}_identity")),
                    op_type: OpKind::Identity.name().into(),
                    input: vec![current],
                    output: vec![out.clone()],
                    ..NodeProto::default()
                });
                out
            };
            graph
                .output
                .push(value_info(m, term, &name, m.value_type(v))?);
        }
        Ok(())
    }
}
