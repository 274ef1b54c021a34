//! The models of the `ai.onnx.ml` operators decoded once from their
//! attributes, for shape inference, folding and bufferization alike:
//! linear models, tree ensembles (the opset 1/3 node tables of
//! TreeEnsembleRegressor/Classifier and the opset 5 TreeEnsemble), the
//! post transforms, and how a classifier turns scores into labels and
//! probabilities.
//!
//! Where the ONNX ML spec leaves a case open, the rules follow what
//! onnxruntime does, because exporters (skl2onnx, onnxmltools) write
//! models for it; e.g. a binary tree classifier voting for class 0 only
//! with non-negative weights gives `[1 - s, s]`, with mixed weights
//! `[-s, s]`; a softmax of that one score is not taken. Where onnxruntime contradicts the spec the spec wins:
//! a post transform applies to a single score too (onnxruntime applies
//! only PROBIT there), TreeEnsemble's `post_transform` codes are the
//! spec's (1 = SOFTMAX, 2 = LOGISTIC), and of LabelEncoder's repeated keys
//! the last counts (onnxruntime takes the first).

use crate::ops;
use ir::elements::{DType, Elements, NumClass, WideNum};
use ir::{Module, OpId};
use std::collections::HashMap;

/// What a model does to its score row before returning it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum PostTransform {
    None,
    Logistic,
    Softmax,
    /// Softmax over the non-zero scores; zeros stay zero.
    SoftmaxZero,
    /// `sqrt(2) * erfinv(2p - 1)`.
    Probit,
}

impl PostTransform {
    pub fn parse(s: &str) -> Result<Self, String> {
        Ok(match s {
            "NONE" => Self::None,
            "LOGISTIC" => Self::Logistic,
            "SOFTMAX" => Self::Softmax,
            "SOFTMAX_ZERO" => Self::SoftmaxZero,
            "PROBIT" => Self::Probit,
            _ => return Err(format!("unknown post_transform '{s}'")),
        })
    }
    /// TreeEnsemble's integer code.
    pub fn from_code(c: i64) -> Result<Self, String> {
        Ok(match c {
            0 => Self::None,
            1 => Self::Softmax,
            2 => Self::Logistic,
            3 => Self::SoftmaxZero,
            4 => Self::Probit,
            _ => return Err(format!("unknown post_transform {c}")),
        })
    }
}

/// How the votes of the trees for one target combine.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Aggregate {
    Sum,
    /// The sum divided by the number of trees.
    Average,
    Min,
    Max,
}

impl Aggregate {
    fn parse(s: &str) -> Result<Self, String> {
        Ok(match s {
            "SUM" => Self::Sum,
            "AVERAGE" => Self::Average,
            "MIN" => Self::Min,
            "MAX" => Self::Max,
            _ => return Err(format!("unknown aggregate_function '{s}'")),
        })
    }
    fn from_code(c: i64) -> Result<Self, String> {
        Ok(match c {
            0 => Self::Average,
            1 => Self::Sum,
            2 => Self::Min,
            3 => Self::Max,
            _ => return Err(format!("unknown aggregate_function {c}")),
        })
    }
}

/// The test of a tree node (`x` the feature, `t` the threshold): true
/// goes to the node's `yes` child. NaN fails every ordered test (`!=`
/// holds) unless the node sends missing values to `yes`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Mode {
    Leq,
    Lt,
    Gte,
    Gt,
    Eq,
    Neq,
    /// `x` is one of the node's `members`.
    Member,
    Leaf,
}

impl Mode {
    fn parse(s: &str) -> Result<Self, String> {
        Ok(match s {
            "BRANCH_LEQ" => Self::Leq,
            "BRANCH_LT" => Self::Lt,
            "BRANCH_GTE" => Self::Gte,
            "BRANCH_GT" => Self::Gt,
            "BRANCH_EQ" => Self::Eq,
            "BRANCH_NEQ" => Self::Neq,
            "LEAF" => Self::Leaf,
            _ => return Err(format!("unknown node mode '{s}'")),
        })
    }
    fn from_code(c: i64) -> Result<Self, String> {
        Ok(match c {
            0 => Self::Leq,
            1 => Self::Lt,
            2 => Self::Gte,
            3 => Self::Gt,
            4 => Self::Eq,
            5 => Self::Neq,
            6 => Self::Member,
            _ => return Err(format!("unknown node mode {c}")),
        })
    }
    /// The test on `x` (NaN handling included, without missing-value
    /// tracking).
    pub fn test(self, x: f64, t: f64, members: &[f64]) -> bool {
        match self {
            Self::Leq => x <= t,
            Self::Lt => x < t,
            Self::Gte => x >= t,
            Self::Gt => x > t,
            Self::Eq => x == t,
            Self::Neq => x != t,
            Self::Member => members.contains(&x),
            Self::Leaf => false,
        }
    }
}

/// One node of the flattened forest: a branch (children are indices into
/// [`Forest::nodes`]) or a leaf (its votes are `votes[leaf.0..leaf.1]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub mode: Mode,
    pub feature: usize,
    pub threshold: f64,
    pub missing_yes: bool,
    pub yes: usize,
    pub no: usize,
    /// `Forest::members[members.0..members.1]` for `Mode::Member`.
    pub members: (usize, usize),
    pub leaf: (usize, usize),
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Vote {
    pub target: usize,
    pub weight: f64,
}

/// A tree ensemble in one encoding for all three operators.
#[derive(Clone, Debug)]
pub struct Forest {
    pub nodes: Vec<Node>,
    /// The root node of each tree.
    pub roots: Vec<usize>,
    pub votes: Vec<Vote>,
    pub members: Vec<f64>,
    /// Score columns the trees vote for.
    pub targets: usize,
    pub aggregate: Aggregate,
    pub post: PostTransform,
    /// Added to each target after aggregation (empty: none).
    pub base: Vec<f64>,
    /// Base values go only to targets some tree voted for in that row
    /// (a target nothing voted for stays 0, as onnxruntime does for
    /// regressors); otherwise to every target.
    pub base_if_voted: bool,
    /// Thresholds and weights were given in double precision.
    pub double: bool,
}

/// A float list given as floats or as a `*_as_tensor` tensor; true when
/// the tensor holds doubles.
fn float_list(plain: Option<Vec<f64>>, tensor: Option<&Elements>) -> (Vec<f64>, bool) {
    match tensor {
        Some(e) => {
            let class = e.dtype().class();
            let double = e.dtype().bits() > 32;
            (e.iter().map(|w| w.to_f64(class)).collect(), double)
        }
        None => (plain.unwrap_or_default(), false),
    }
}

/// The opset 1/3 node table and leaf votes of TreeEnsembleRegressor and
/// TreeEnsembleClassifier.
struct Table<'m> {
    treeids: Vec<i64>,
    nodeids: Vec<i64>,
    featureids: Vec<i64>,
    modes: Vec<&'m str>,
    values: Vec<f64>,
    yes: Vec<i64>,
    no: Vec<i64>,
    missing: Vec<i64>,
    vote_trees: Vec<i64>,
    vote_nodes: Vec<i64>,
    vote_ids: Vec<i64>,
    vote_weights: Vec<f64>,
    double: bool,
}

/// More score columns than this is taken for a corrupt attribute, not
/// allocated.
pub const MAX_TARGETS: usize = 1 << 20;

fn checked_targets(n: usize) -> Result<usize, String> {
    if n > MAX_TARGETS {
        return Err(format!("{n} targets, more than {MAX_TARGETS}"));
    }
    Ok(n)
}

fn index(v: i64, what: &str) -> Result<usize, String> {
    usize::try_from(v).map_err(|_| format!("{what} {v} is negative"))
}

fn same_len(n: usize, lists: &[(&str, usize)]) -> Result<(), String> {
    match lists.iter().find(|(_, l)| *l != n) {
        Some((name, l)) => Err(format!("{name} has {l} entries, expected {n}")),
        None => Ok(()),
    }
}

impl Table<'_> {
    fn check(&self) -> Result<(), String> {
        let n = self.nodeids.len();
        same_len(
            n,
            &[
                ("nodes_treeids", self.treeids.len()),
                ("nodes_featureids", self.featureids.len()),
                ("nodes_modes", self.modes.len()),
                ("nodes_values", self.values.len()),
                ("nodes_truenodeids", self.yes.len()),
                ("nodes_falsenodeids", self.no.len()),
            ],
        )?;
        if !self.missing.is_empty() {
            same_len(
                n,
                &[("nodes_missing_value_tracks_true", self.missing.len())],
            )?;
        }
        same_len(
            self.vote_ids.len(),
            &[
                ("the leaf tree ids", self.vote_trees.len()),
                ("the leaf node ids", self.vote_nodes.len()),
                ("the leaf weights", self.vote_weights.len()),
            ],
        )
    }

    /// Nodes keyed by (tree, node id) flattened in table order; a tree's
    /// root is its one node no branch of it points to.
    fn forest(&self, targets: usize) -> Result<Forest, String> {
        self.check()?;
        let mut at = HashMap::with_capacity(self.nodeids.len());
        let mut trees: Vec<i64> = Vec::new();
        for (i, (&t, &id)) in self.treeids.iter().zip(&self.nodeids).enumerate() {
            if at.insert((t, id), i).is_some() {
                return Err(format!("tree {t} has node id {id} twice"));
            }
            if !trees.contains(&t) {
                trees.push(t);
            }
        }
        let child = |t: i64, id: i64| {
            at.get(&(t, id))
                .copied()
                .ok_or_else(|| format!("tree {t} has no node {id}"))
        };
        let mut nodes = Vec::with_capacity(self.nodeids.len());
        let mut pointed = vec![false; self.nodeids.len()];
        for i in 0..self.nodeids.len() {
            let mode = Mode::parse(self.modes[i])?;
            let t = self.treeids[i];
            let (yes, no) = if mode == Mode::Leaf {
                (i, i)
            } else {
                (child(t, self.yes[i])?, child(t, self.no[i])?)
            };
            if mode != Mode::Leaf {
                pointed[yes] = true;
                pointed[no] = true;
            }
            nodes.push(Node {
                mode,
                feature: if mode == Mode::Leaf {
                    0
                } else {
                    index(self.featureids[i], "feature id")?
                },
                threshold: self.values[i],
                missing_yes: self.missing.get(i).is_some_and(|&m| m != 0),
                yes,
                no,
                members: (0, 0),
                leaf: (0, 0),
            });
        }
        let mut roots = Vec::with_capacity(trees.len());
        for &t in &trees {
            let mut r = (0..nodes.len()).filter(|&i| self.treeids[i] == t && !pointed[i]);
            match (r.next(), r.next()) {
                (Some(root), None) => roots.push(root),
                _ => return Err(format!("tree {t} does not have exactly one root")),
            }
        }
        let mut per_leaf: Vec<Vec<Vote>> = vec![Vec::new(); nodes.len()];
        for k in 0..self.vote_ids.len() {
            let leaf = child(self.vote_trees[k], self.vote_nodes[k])?;
            if nodes[leaf].mode != Mode::Leaf {
                return Err(format!(
                    "a weight is given for node {} of tree {}, which is not a leaf",
                    self.vote_nodes[k], self.vote_trees[k]
                ));
            }
            let target = index(self.vote_ids[k], "target id")?;
            if target >= targets {
                return Err(format!("target id {target} is not below {targets}"));
            }
            per_leaf[leaf].push(Vote {
                target,
                weight: self.vote_weights[k],
            });
        }
        let mut votes = Vec::with_capacity(self.vote_ids.len());
        for (n, v) in nodes.iter_mut().zip(per_leaf) {
            n.leaf = (votes.len(), votes.len() + v.len());
            votes.extend(v);
        }
        let f = Forest {
            nodes,
            roots,
            votes,
            members: Vec::new(),
            targets,
            aggregate: Aggregate::Sum,
            post: PostTransform::None,
            base: Vec::new(),
            base_if_voted: true,
            double: self.double,
        };
        f.check_acyclic()?;
        Ok(f)
    }
}

/// The number of targets of a TreeEnsembleRegressor: `n_targets`, else one
/// more than the largest target id.
pub fn regressor_targets(m: &Module, op: OpId) -> usize {
    let v = ops::TreeEnsembleRegressor::of(m, op);
    match v.n_targets() {
        Some(n) => usize::try_from(n).unwrap_or(0),
        None => v
            .target_ids()
            .and_then(|ids| ids.iter().max().copied())
            .map_or(1, |t| usize::try_from(t).map_or(1, |t| t + 1)),
    }
}

impl Forest {
    /// TreeEnsembleRegressor.
    pub fn regressor(m: &Module, op: OpId) -> Result<Forest, String> {
        let v = ops::TreeEnsembleRegressor::of(m, op);
        let (values, d1) = float_list(v.nodes_values(), v.nodes_values_as_tensor());
        let (weights, d2) = float_list(v.target_weights(), v.target_weights_as_tensor());
        let (base, _) = float_list(v.base_values(), v.base_values_as_tensor());
        let table = Table {
            treeids: v.nodes_treeids().unwrap_or_default(),
            nodeids: v.nodes_nodeids().unwrap_or_default(),
            featureids: v.nodes_featureids().unwrap_or_default(),
            modes: v.nodes_modes().unwrap_or_default(),
            values,
            yes: v.nodes_truenodeids().unwrap_or_default(),
            no: v.nodes_falsenodeids().unwrap_or_default(),
            missing: v.nodes_missing_value_tracks_true().unwrap_or_default(),
            vote_trees: v.target_treeids().unwrap_or_default(),
            vote_nodes: v.target_nodeids().unwrap_or_default(),
            vote_ids: v.target_ids().unwrap_or_default(),
            vote_weights: weights,
            double: d1 || d2,
        };
        let targets = checked_targets(regressor_targets(m, op))?;
        let mut f = table.forest(targets)?;
        f.aggregate = Aggregate::parse(v.aggregate_function())?;
        f.post = PostTransform::parse(v.post_transform())?;
        f.set_base(base)?;
        Ok(f)
    }

    /// TreeEnsembleClassifier: the forest over its score columns and how
    /// they become labels and probabilities.
    pub fn classifier(m: &Module, op: OpId) -> Result<(Forest, Classify), String> {
        let v = ops::TreeEnsembleClassifier::of(m, op);
        let labels = class_labels(v.classlabels_int64s(), v.classlabels_strings())?;
        let (values, d1) = float_list(v.nodes_values(), v.nodes_values_as_tensor());
        let (weights, d2) = float_list(v.class_weights(), v.class_weights_as_tensor());
        let (base, _) = float_list(v.base_values(), v.base_values_as_tensor());
        let post = PostTransform::parse(v.post_transform())?;
        let ids = v.class_ids().unwrap_or_default();
        let classes = labels.len();
        if classes < 2 {
            return Err(format!(
                "{classes} class label(s); a classifier needs two or more"
            ));
        }
        let voted = |c: i64| ids.contains(&c);
        // Two classes, votes for class 0 only: one score column, read as
        // the positive class's (onnxruntime's binary convention).
        let single = classes == 2 && !voted(1);
        let positive = weights.iter().all(|&w| w >= 0.0);
        let (targets, rule, scores, base_if_voted) = if classes > 2 {
            (classes, Rule::Argmax, Scores::Columns, false)
        } else if single {
            let at = if positive { 0.5 } else { 0.0 };
            let rule = Rule::Threshold { column: 0, at };
            (1, rule, Scores::Binary { positive }, true)
        } else {
            // Two score columns: the label follows the second one.
            let at = if voted(0) || !positive { 0.0 } else { 0.5 };
            (2, Rule::Threshold { column: 1, at }, Scores::Columns, false)
        };
        if post == PostTransform::Probit && matches!(scores, Scores::Binary { .. }) {
            return Err(
                "post_transform PROBIT on a binary classifier with one score \
                        column is not supported"
                    .into(),
            );
        }
        let table = Table {
            treeids: v.nodes_treeids().unwrap_or_default(),
            nodeids: v.nodes_nodeids().unwrap_or_default(),
            featureids: v.nodes_featureids().unwrap_or_default(),
            modes: v.nodes_modes().unwrap_or_default(),
            values,
            yes: v.nodes_truenodeids().unwrap_or_default(),
            no: v.nodes_falsenodeids().unwrap_or_default(),
            missing: v.nodes_missing_value_tracks_true().unwrap_or_default(),
            vote_trees: v.class_treeids().unwrap_or_default(),
            vote_nodes: v.class_nodeids().unwrap_or_default(),
            vote_ids: ids.clone(),
            vote_weights: weights,
            double: d1 || d2,
        };
        let mut f = table.forest(targets)?;
        f.post = post;
        f.base_if_voted = base_if_voted;
        f.set_base(base.into_iter().take(targets).collect())?;
        let classify = Classify {
            labels,
            rule,
            scores,
        };
        Ok((f, classify))
    }

    /// TreeEnsemble (ai.onnx.ml opset 5): `nodes_*` are the branches,
    /// `leaf_*` the leaves (after the branches in [`Forest::nodes`]).
    pub fn tree_ensemble(m: &Module, op: OpId) -> Result<Forest, String> {
        let v = ops::TreeEnsemble::of(m, op);
        let (votes, targets) = v5_votes(&v)?;
        let (mut nodes, members, double) = v5_branches(&v, votes.len())?;
        let n = nodes.len();
        for k in 0..votes.len() {
            nodes.push(Node {
                mode: Mode::Leaf,
                feature: 0,
                threshold: 0.0,
                missing_yes: false,
                yes: n + k,
                no: n + k,
                members: (0, 0),
                leaf: (k, k + 1),
            });
        }
        let roots = v
            .tree_roots()
            .iter()
            .map(|&r| {
                let i = index(r, "tree root")?;
                (i < n)
                    .then_some(i)
                    .ok_or(format!("tree root {r} out of range"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let f = Forest {
            nodes,
            roots,
            votes,
            members,
            targets,
            aggregate: Aggregate::from_code(v.aggregate_function())?,
            post: PostTransform::from_code(v.post_transform())?,
            base: Vec::new(),
            base_if_voted: true,
            double,
        };
        f.check_acyclic()?;
        Ok(f)
    }

    fn set_base(&mut self, base: Vec<f64>) -> Result<(), String> {
        if !base.is_empty() && base.len() != self.targets {
            return Err(format!(
                "base_values has {} entries, expected {}",
                base.len(),
                self.targets
            ));
        }
        self.base = base;
        Ok(())
    }

    /// Every walk from a root ends at a leaf: the branches form a DAG.
    fn check_acyclic(&self) -> Result<(), String> {
        // 0 unseen, 1 on the current path, 2 done.
        let mut state = vec![0u8; self.nodes.len()];
        for &root in &self.roots {
            let mut stack = vec![(root, false)];
            while let Some((i, leaving)) = stack.pop() {
                if leaving {
                    state[i] = 2;
                    continue;
                }
                match state[i] {
                    1 => return Err("the trees have a cycle".into()),
                    2 => continue,
                    _ => {}
                }
                state[i] = 1;
                stack.push((i, true));
                let n = &self.nodes[i];
                if n.mode != Mode::Leaf {
                    for c in [n.yes, n.no] {
                        if state[c] == 1 {
                            return Err("the trees have a cycle".into());
                        }
                        stack.push((c, false));
                    }
                }
            }
        }
        Ok(())
    }

    /// The largest feature index a branch reads (`None`: no branch).
    pub fn max_feature(&self) -> Option<usize> {
        self.nodes
            .iter()
            .filter(|n| n.mode != Mode::Leaf)
            .map(|n| n.feature)
            .max()
    }

    /// For each target: whether every row gets a vote for it (some tree
    /// votes for it at each of its reachable leaves).
    pub fn always_voted(&self) -> Vec<bool> {
        let mut covered = vec![false; self.targets];
        for &root in &self.roots {
            let mut all = vec![true; self.targets];
            let mut seen = vec![false; self.nodes.len()];
            let mut stack = vec![root];
            while let Some(i) = stack.pop() {
                if std::mem::replace(&mut seen[i], true) {
                    continue;
                }
                let n = &self.nodes[i];
                if n.mode == Mode::Leaf {
                    let here = &self.votes[n.leaf.0..n.leaf.1];
                    for (t, a) in all.iter_mut().enumerate() {
                        *a &= here.iter().any(|v| v.target == t);
                    }
                } else {
                    stack.extend([n.yes, n.no]);
                }
            }
            for (c, a) in covered.iter_mut().zip(all) {
                *c |= a;
            }
        }
        covered
    }
}

/// Reference semantics: what the compiled kernels compute, used to fold
/// constant inputs.
impl Forest {
    /// The leaf a walk from `root` ends at for the features `x` (a missing
    /// feature reads as NaN).
    pub fn leaf(&self, root: usize, x: &[f64]) -> usize {
        let mut i = root;
        // The forest is acyclic: a walk takes at most one step per node.
        for _ in 0..self.nodes.len() {
            let n = &self.nodes[i];
            if n.mode == Mode::Leaf {
                break;
            }
            let v = x.get(n.feature).copied().unwrap_or(f64::NAN);
            let members = self.members.get(n.members.0..n.members.1).unwrap_or(&[]);
            let yes = n.mode.test(v, n.threshold, members) || (n.missing_yes && v.is_nan());
            i = if yes { n.yes } else { n.no };
        }
        i
    }

    /// The aggregated scores of one row, base values added (before the
    /// post transform).
    pub fn scores(&self, x: &[f64]) -> Vec<f64> {
        let mut acc = vec![0.0; self.targets];
        let mut voted = vec![false; self.targets];
        for &root in &self.roots {
            let n = &self.nodes[self.leaf(root, x)];
            for v in self.votes.get(n.leaf.0..n.leaf.1).unwrap_or(&[]) {
                let (a, seen) = (&mut acc[v.target], &mut voted[v.target]);
                *a = match self.aggregate {
                    Aggregate::Sum | Aggregate::Average => *a + v.weight,
                    Aggregate::Min if *seen => a.min(v.weight),
                    Aggregate::Max if *seen => a.max(v.weight),
                    Aggregate::Min | Aggregate::Max => v.weight,
                };
                *seen = true;
            }
        }
        let trees = self.roots.len().max(1) as f64;
        for (k, a) in acc.iter_mut().enumerate() {
            if self.aggregate == Aggregate::Average {
                *a /= trees;
            }
            if let Some(&b) = self.base.get(k) {
                if voted[k] || !self.base_if_voted {
                    *a += b;
                }
            }
        }
        acc
    }
}

impl PostTransform {
    /// Applies the transform to one score row.
    pub fn apply(self, row: &mut [f64]) {
        let logistic = |x: f64| 1.0 / (1.0 + (-x).exp());
        match self {
            Self::None => {}
            Self::Logistic => row.iter_mut().for_each(|x| *x = logistic(*x)),
            Self::Probit => row.iter_mut().for_each(|x| *x = probit(*x)),
            Self::Softmax | Self::SoftmaxZero => {
                let zero = self == Self::SoftmaxZero;
                let kept = |x: f64| !(zero && x == 0.0);
                let max = row
                    .iter()
                    .copied()
                    .filter(|&x| kept(x))
                    .fold(f64::NEG_INFINITY, f64::max);
                let mut sum = 0.0;
                for x in row.iter_mut() {
                    *x = if kept(*x) { (*x - max).exp() } else { 0.0 };
                    sum += *x;
                }
                // A row of zeros is 0/0 (NaN), as onnxruntime computes it.
                for x in row.iter_mut() {
                    *x /= sum;
                }
            }
        }
    }
}

impl Classify {
    /// The label and the probability row of one row of raw scores.
    pub fn finish(&self, raw: &[f64], post: PostTransform) -> (i64, Vec<f64>) {
        let pick = |second: bool| {
            let i = usize::from(second);
            self.labels.get(i).copied().unwrap_or_default()
        };
        let label = match self.rule {
            Rule::Argmax => {
                let mut best = 0;
                for (i, &x) in raw.iter().enumerate() {
                    if x > raw[best] {
                        best = i;
                    }
                }
                self.labels.get(best).copied().unwrap_or_default()
            }
            Rule::Threshold { column, at } => pick(raw.get(column).is_some_and(|&s| s > at)),
        };
        let probs = match self.scores {
            Scores::Columns => {
                let mut row = raw.to_vec();
                post.apply(&mut row);
                row
            }
            Scores::Binary { positive } => {
                let s = raw.first().copied().unwrap_or_default();
                let logistic = |x: f64| 1.0 / (1.0 + (-x).exp());
                match (post, positive) {
                    (PostTransform::Logistic, true) => vec![1.0 - logistic(s), logistic(s)],
                    (PostTransform::Logistic, false) => vec![logistic(-s), logistic(s)],
                    (_, true) => vec![1.0 - s, s],
                    (_, false) => vec![-s, s],
                }
            }
        };
        (label, probs)
    }
}

impl Linear {
    /// `W · x + b` for one row of features.
    pub fn scores(&self, x: &[f64]) -> Vec<f64> {
        self.weights
            .chunks(self.features.max(1))
            .zip(&self.intercepts)
            .map(|(w, b)| w.iter().zip(x).map(|(w, x)| w * x).sum::<f64>() + b)
            .collect()
    }
}

/// TreeEnsemble's leaves (one vote each) and the number of targets.
fn v5_votes(v: &ops::TreeEnsemble<'_>) -> Result<(Vec<Vote>, usize), String> {
    let leaf_targets = v.leaf_targetids();
    let (weights, _) = float_list(None, Some(v.leaf_weights().ok_or("needs leaf_weights")?));
    same_len(leaf_targets.len(), &[("leaf_weights", weights.len())])?;
    let targets = checked_targets(match v.n_targets() {
        Some(t) => index(t, "n_targets")?,
        None => leaf_targets
            .iter()
            .max()
            .map_or(Ok(1), |&t| index(t, "leaf target").map(|t| t + 1))?,
    })?;
    let mut votes = Vec::with_capacity(leaf_targets.len());
    for (&t, &weight) in leaf_targets.iter().zip(&weights) {
        let target = index(t, "leaf target id")?;
        if target >= targets {
            return Err(format!("leaf target id {target} is not below {targets}"));
        }
        votes.push(Vote { target, weight });
    }
    Ok((votes, targets))
}

/// TreeEnsemble's branches (children past them are the `leaves`), the
/// member values, and whether the splits are doubles.
fn v5_branches(
    v: &ops::TreeEnsemble<'_>,
    leaves: usize,
) -> Result<(Vec<Node>, Vec<f64>, bool), String> {
    let features = v.nodes_featureids();
    let n = features.len();
    let (yes, no) = (v.nodes_truenodeids(), v.nodes_falsenodeids());
    let (yes_leaf, no_leaf) = (v.nodes_trueleafs(), v.nodes_falseleafs());
    let modes: Vec<i64> = elements_ints(v.nodes_modes().ok_or("needs nodes_modes")?);
    let (splits, double) = float_list(None, Some(v.nodes_splits().ok_or("needs nodes_splits")?));
    let missing = v.nodes_missing_value_tracks_true().unwrap_or_default();
    same_len(
        n,
        &[
            ("nodes_modes", modes.len()),
            ("nodes_splits", splits.len()),
            ("nodes_truenodeids", yes.len()),
            ("nodes_falsenodeids", no.len()),
            ("nodes_trueleafs", yes_leaf.len()),
            ("nodes_falseleafs", no_leaf.len()),
        ],
    )?;
    if !missing.is_empty() {
        same_len(n, &[("nodes_missing_value_tracks_true", missing.len())])?;
    }
    let (members, ranges) = membership_sets(v.membership_values(), &modes)?;
    let child = |id: i64, leaf: i64| -> Result<usize, String> {
        let i = index(id, "child")?;
        let (limit, off) = if leaf != 0 { (leaves, n) } else { (n, 0) };
        if i >= limit {
            return Err(format!("child {id} out of range"));
        }
        Ok(i + off)
    };
    let mut nodes = Vec::with_capacity(n + leaves);
    let mut member_sets = ranges.into_iter();
    for i in 0..n {
        let mode = Mode::from_code(modes[i])?;
        let members = match mode {
            Mode::Member => member_sets.next().unwrap_or((0, 0)),
            _ => (0, 0),
        };
        nodes.push(Node {
            mode,
            feature: index(features[i], "feature id")?,
            threshold: splits[i],
            missing_yes: missing.get(i).is_some_and(|&x| x != 0),
            yes: child(yes[i], yes_leaf[i])?,
            no: child(no[i], no_leaf[i])?,
            members,
            leaf: (0, 0),
        });
    }
    Ok((nodes, members, double))
}

fn elements_ints(e: &Elements) -> Vec<i64> {
    let class = e.dtype().class();
    e.iter().map(|w| w.to_f64(class) as i64).collect()
}

/// All member values, and each set's range of them.
type MemberSets = (Vec<f64>, Vec<(usize, usize)>);

/// The member sets of the BRANCH_MEMBER nodes, in node order: runs of
/// `membership_values` separated by NaN.
fn membership_sets(values: Option<&Elements>, modes: &[i64]) -> Result<MemberSets, String> {
    let wanted = modes.iter().filter(|&&m| m == 6).count();
    if wanted == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    let Some(e) = values else {
        return Err("BRANCH_MEMBER nodes need membership_values".into());
    };
    let class = e.dtype().class();
    let mut members = Vec::new();
    let mut ranges = Vec::new();
    let mut start = 0;
    for v in e.iter().map(|w| w.to_f64(class)) {
        if v.is_nan() {
            ranges.push((start, members.len()));
            start = members.len();
        } else {
            members.push(v);
        }
    }
    if start < members.len() {
        ranges.push((start, members.len()));
    }
    if ranges.len() < wanted {
        return Err(format!(
            "membership_values has {} sets for {wanted} BRANCH_MEMBER nodes",
            ranges.len()
        ));
    }
    Ok((members, ranges))
}

/// How a classifier's label follows from its raw scores.
#[derive(Copy, Clone, PartialEq, Debug)]
pub enum Rule {
    /// The first largest score's class.
    Argmax,
    /// `labels[1]` when score `column` exceeds `at`, else `labels[0]`.
    Threshold { column: usize, at: f64 },
}

/// How raw scores become the probability output.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Scores {
    /// One column per score, through the post transform.
    Columns,
    /// One score `s` for two classes: `[1 - s, s]` when `positive` (a
    /// linear model, or trees whose weights are all non-negative),
    /// `[-s, s]` otherwise; LOGISTIC maps `s` first (`[1 - σ(s), σ(s)]`,
    /// `[σ(-s), σ(s)]`), the softmaxes leave it alone.
    Binary { positive: bool },
}

/// The label/probability half of a classifier.
#[derive(Clone, Debug, PartialEq)]
pub struct Classify {
    pub labels: Vec<i64>,
    pub rule: Rule,
    pub scores: Scores,
}

impl Classify {
    /// Width of the probability output.
    pub fn columns(&self, raw: usize) -> usize {
        match self.scores {
            Scores::Columns => raw,
            Scores::Binary { .. } => 2,
        }
    }
}

/// Integer class labels; string labels cannot be compiled.
fn class_labels(ints: Option<Vec<i64>>, strings: Option<Vec<&str>>) -> Result<Vec<i64>, String> {
    match (ints, strings) {
        (Some(l), _) if !l.is_empty() => Ok(l),
        (_, Some(s)) if !s.is_empty() => Err(STRING_LABELS.into()),
        _ => Err("needs class labels (classlabels_ints or classlabels_int64s)".into()),
    }
}

/// Why string class labels are refused.
pub const STRING_LABELS: &str = "string class labels are not supported: onnxc has no string \
     tensors (its C ABI passes numeric buffers only); export the model with integer labels";

/// LinearClassifier and LinearRegressor: `scores = X · Wᵀ + b`.
#[derive(Clone, Debug)]
pub struct Linear {
    /// Row-major `[rows, features]`.
    pub weights: Vec<f64>,
    pub rows: usize,
    pub features: usize,
    /// One per row (zeros when absent).
    pub intercepts: Vec<f64>,
    pub post: PostTransform,
}

impl Linear {
    fn new(w: Vec<f64>, b: Option<Vec<f64>>, rows: usize, post: &str) -> Result<Linear, String> {
        if rows == 0 || rows > w.len() || !w.len().is_multiple_of(rows) {
            return Err(format!(
                "{} coefficients do not split into {rows} rows",
                w.len()
            ));
        }
        let intercepts = match b {
            Some(b) if !b.is_empty() => b,
            _ => vec![0.0; rows],
        };
        if intercepts.len() != rows {
            return Err(format!(
                "{} intercepts for {rows} score rows",
                intercepts.len()
            ));
        }
        Ok(Linear {
            features: w.len() / rows,
            weights: w,
            rows,
            intercepts,
            post: PostTransform::parse(post)?,
        })
    }

    pub fn regressor(m: &Module, op: OpId) -> Result<Linear, String> {
        let v = ops::LinearRegressor::of(m, op);
        let rows = usize::try_from(v.targets()).map_err(|_| "targets is negative")?;
        let w = v.coefficients().ok_or("needs coefficients")?;
        Linear::new(w, v.intercepts(), rows, v.post_transform())
    }

    /// One coefficient row per class, or one row for two classes
    /// (scores `[1 - s, s]`, label by `s > 0`). The rows are counted from
    /// the input's `features` when known, else from the intercepts.
    pub fn classifier(
        m: &Module,
        op: OpId,
        features: Option<usize>,
    ) -> Result<(Linear, Classify), String> {
        let v = ops::LinearClassifier::of(m, op);
        let labels = class_labels(v.classlabels_ints(), v.classlabels_strings())?;
        let w = v.coefficients();
        let b = v.intercepts();
        let classes = labels.len();
        let rows = match (features, b.as_ref().map(Vec::len)) {
            (Some(f), _) if f > 0 && w.len().is_multiple_of(f) => w.len() / f,
            (_, Some(r)) if r > 0 => r,
            _ if classes > 0 && w.len().is_multiple_of(classes) => classes,
            _ => 1,
        };
        let lin = Linear::new(w, b, rows, v.post_transform())?;
        let classify = if rows == classes && classes >= 2 {
            Classify {
                labels,
                rule: Rule::Argmax,
                scores: Scores::Columns,
            }
        } else if rows == 1 && classes == 2 {
            if lin.post == PostTransform::Probit {
                return Err("post_transform PROBIT with one coefficient row for two \
                            classes is not supported"
                    .into());
            }
            Classify {
                labels,
                rule: Rule::Threshold { column: 0, at: 0.0 },
                scores: Scores::Binary { positive: true },
            }
        } else {
            return Err(format!(
                "{rows} coefficient rows for {classes} classes (one per class, or one for two)"
            ));
        };
        Ok((lin, classify))
    }
}

/// LabelEncoder over numbers: sorted keys (the last of equal keys wins)
/// and their values; a NaN key matches NaN.
#[derive(Clone, Debug)]
pub struct LabelMap {
    pub key: DType,
    pub value: DType,
    pub entries: Vec<(WideNum, WideNum)>,
    pub nan_value: Option<WideNum>,
    pub default: WideNum,
}

/// A number list given as floats, ints or a tensor, with its dtype.
fn numbers(
    floats: Option<Vec<f64>>,
    ints: Option<Vec<i64>>,
    strings: bool,
    tensor: Option<&Elements>,
    what: &str,
) -> Result<(DType, Vec<WideNum>), String> {
    if let Some(t) = tensor {
        return Ok((t.dtype(), t.to_wide_vec()));
    }
    match (floats, ints) {
        (Some(f), _) if !f.is_empty() => {
            Ok((DType::F32, f.into_iter().map(WideNum::from_f64).collect()))
        }
        (_, Some(i)) if !i.is_empty() => {
            Ok((DType::I64, i.into_iter().map(WideNum::from_i64).collect()))
        }
        _ if strings => Err(format!(
            "string {what} are not supported: onnxc has no string tensors"
        )),
        _ => Err(format!("needs {what}")),
    }
}

impl LabelMap {
    pub fn of(m: &Module, op: OpId) -> Result<LabelMap, String> {
        let v = ops::LabelEncoder::of(m, op);
        let has = |s: Option<Vec<&str>>| s.is_some_and(|s| !s.is_empty());
        let (key, keys) = numbers(
            v.keys_floats(),
            v.keys_int64s(),
            has(v.keys_strings()),
            v.keys_tensor(),
            "keys",
        )?;
        let (value, values) = numbers(
            v.values_floats(),
            v.values_int64s(),
            has(v.values_strings()),
            v.values_tensor(),
            "values",
        )?;
        same_len(keys.len(), &[("the values", values.len())])?;
        let float_key = key.class() == NumClass::Float;
        let default = match v.default_tensor().and_then(|t| t.get(0)) {
            Some(d) => d,
            None if value.class() == NumClass::Float => WideNum::from_f64(v.default_float()),
            None => WideNum::from_i64(v.default_int64()),
        };
        let mut nan_value = None;
        let mut entries: Vec<(WideNum, WideNum)> = Vec::with_capacity(keys.len());
        for (k, val) in keys.into_iter().zip(values) {
            if float_key && k.f64().is_nan() {
                nan_value = Some(val);
            } else {
                entries.push((k, val));
            }
        }
        // A stable sort keeps equal keys in order: the last one wins.
        let order = |a: &WideNum, b: &WideNum| {
            if float_key {
                a.f64().total_cmp(&b.f64())
            } else {
                a.i64().cmp(&b.i64())
            }
        };
        entries.sort_by(|a, b| order(&a.0, &b.0));
        let same = |a: &WideNum, b: &WideNum| {
            if float_key {
                a.f64() == b.f64()
            } else {
                a == b
            }
        };
        let mut kept: Vec<(WideNum, WideNum)> = Vec::with_capacity(entries.len());
        for e in entries {
            match kept.last_mut() {
                Some(last) if same(&last.0, &e.0) => *last = e,
                _ => kept.push(e),
            }
        }
        Ok(LabelMap {
            key,
            value,
            entries: kept,
            nan_value,
            default,
        })
    }

    /// The value of key `x` (of the key dtype's class).
    pub fn get(&self, x: WideNum) -> WideNum {
        let float = self.key.class() == NumClass::Float;
        if float && x.f64().is_nan() {
            return self.nan_value.unwrap_or(self.default);
        }
        let hit = self.entries.binary_search_by(|(k, _)| {
            if float {
                k.f64()
                    .partial_cmp(&x.f64())
                    .unwrap_or(std::cmp::Ordering::Less)
            } else {
                k.i64().cmp(&x.i64())
            }
        });
        hit.map_or(self.default, |i| self.entries[i].1)
    }
}

/// The inverse error function (Giles' single-precision polynomials,
/// relative error below 1e-6); [`probit`] of a probability.
pub fn erfinv(x: f64) -> f64 {
    let w = -((1.0 - x) * (1.0 + x)).ln();
    let (w, coeffs): (f64, &[f64]) = if w < 5.0 {
        (w - 2.5, &ERFINV_CENTRAL)
    } else {
        (w.sqrt() - 3.0, &ERFINV_TAIL)
    };
    coeffs.iter().fold(0.0, |p, &c| c + p * w) * x
}

/// `sqrt(2) * erfinv(2p - 1)`.
pub fn probit(p: f64) -> f64 {
    std::f64::consts::SQRT_2 * erfinv(2.0 * p - 1.0)
}

/// Horner coefficients of [`erfinv`], highest power first.
pub const ERFINV_CENTRAL: [f64; 9] = [
    2.810_226_36e-08,
    3.432_739_39e-07,
    -3.523_387_7e-06,
    -4.391_506_54e-06,
    0.000_218_580_87,
    -0.001_253_725_03,
    -0.004_177_681_64,
    0.246_640_727,
    1.501_409_41,
];
pub const ERFINV_TAIL: [f64; 9] = [
    -0.000_200_214_257,
    0.000_100_950_558,
    0.001_349_343_22,
    -0.003_673_428_44,
    0.005_739_507_73,
    -0.007_622_461_3,
    0.009_438_870_47,
    1.001_674_06,
    2.832_976_82,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Two trees over two features (values from onnxruntime 1.31 on
    /// these models): tree 0 `x0 <= 0.5 ? leaf 1 : (x1 < 0 ? leaf 3 :
    /// leaf 4)`, tree 1 `x1 > 0.25 ? leaf 1 : leaf 2`.
    const NODES: &str = "nodes_falsenodeids = [2, 0, 4, 0, 0, 2, 0, 0], \
        nodes_featureids = [0, 0, 1, 0, 0, 1, 0, 0], \
        nodes_modes = [\"BRANCH_LEQ\", \"LEAF\", \"BRANCH_LT\", \"LEAF\", \"LEAF\", \"BRANCH_GT\", \"LEAF\", \"LEAF\"], \
        nodes_nodeids = [0, 1, 2, 3, 4, 0, 1, 2], nodes_treeids = [0, 0, 0, 0, 0, 1, 1, 1], \
        nodes_truenodeids = [1, 0, 3, 0, 0, 1, 0, 0], \
        nodes_values = [0.5 : f32, 0.0 : f32, 0.0 : f32, 0.0 : f32, 0.0 : f32, 0.25 : f32, 0.0 : f32, 0.0 : f32]";
    const ROWS: [[f64; 2]; 6] = [
        [0.2, -1.0],
        [0.7, -1.0],
        [0.7, 2.0],
        [0.5, 0.0],
        [f64::NAN, 0.3],
        [0.9, f64::NAN],
    ];

    fn op_of(kind: &str, attrs: &str, results: &str) -> (Module, OpId) {
        let n = if results.starts_with('(') { ":2" } else { "" };
        let text = format!(
            "func.func @f(%x: tensor<?x2xf32>) {{\n  %0{n} = \"onnx_ml.{kind}\"(%x) {{{attrs}}} : (tensor<?x2xf32>) -> {results}\n  return\n}}\n"
        );
        let m = ir::text::parse_module(&text, "t.mlir").unwrap();
        let op = m
            .collect_ops(m.top())
            .into_iter()
            .find(|&o| m.name(o).as_str() == format!("onnx_ml.{kind}"))
            .unwrap();
        (m, op)
    }

    fn regressor(extra: &str) -> Result<Forest, String> {
        let votes = "target_ids = [0, 0, 0, 1, 0, 0, 1], target_nodeids = [1, 3, 4, 4, 1, 2, 2], \
            target_treeids = [0, 0, 0, 0, 1, 1, 1], \
            target_weights = [1.0 : f32, 2.0 : f32, 3.0 : f32, -4.0 : f32, 10.0 : f32, 20.0 : f32, -30.0 : f32]";
        let (m, op) = op_of(
            "TreeEnsembleRegressor",
            &format!("{NODES}, {votes}, n_targets = 2 : i64{extra}"),
            "tensor<?x2xf32>",
        );
        Forest::regressor(&m, op)
    }

    fn all_scores(f: &Forest) -> Vec<Vec<f64>> {
        ROWS.iter().map(|r| f.scores(r)).collect()
    }

    #[test]
    fn regressor_aggregates_as_onnxruntime() {
        let base = ", base_values = [0.5 : f32, -0.5 : f32]";
        let want: [(&str, [[f64; 2]; 6]); 4] = [
            (
                "SUM",
                [
                    [21.5, -30.5],
                    [22.5, -30.5],
                    [13.5, -4.5],
                    [21.5, -30.5],
                    [13.5, -4.5],
                    [23.5, -34.5],
                ],
            ),
            (
                "AVERAGE",
                [
                    [11.0, -15.5],
                    [11.5, -15.5],
                    [7.0, -2.5],
                    [11.0, -15.5],
                    [7.0, -2.5],
                    [12.0, -17.5],
                ],
            ),
            (
                "MIN",
                [
                    [1.5, -30.5],
                    [2.5, -30.5],
                    [3.5, -4.5],
                    [1.5, -30.5],
                    [3.5, -4.5],
                    [3.5, -30.5],
                ],
            ),
            (
                "MAX",
                [
                    [20.5, -30.5],
                    [20.5, -30.5],
                    [10.5, -4.5],
                    [20.5, -30.5],
                    [10.5, -4.5],
                    [20.5, -4.5],
                ],
            ),
        ];
        for (agg, rows) in want {
            let f = regressor(&format!("{base}, aggregate_function = \"{agg}\"")).unwrap();
            assert_eq!(all_scores(&f), rows.map(|r| r.to_vec()).to_vec(), "{agg}");
        }
        let f = regressor(", nodes_missing_value_tracks_true = [1, 0, 1, 0, 0, 1, 0, 0]").unwrap();
        let want = [
            [21.0, -30.0],
            [22.0, -30.0],
            [13.0, -4.0],
            [21.0, -30.0],
            [11.0, 0.0],
            [12.0, 0.0],
        ];
        assert_eq!(all_scores(&f), want.map(|r| r.to_vec()).to_vec());
        assert_eq!(f.roots, vec![0, 5]);
        assert_eq!(f.always_voted(), vec![true, false]);
    }

    #[test]
    fn unvoted_targets_stay_zero_without_base() {
        let (m, op) = op_of(
            "TreeEnsembleRegressor",
            &format!("{NODES}, n_targets = 2 : i64, base_values = [0.5 : f32, -0.5 : f32], target_ids = [1], target_nodeids = [1], target_treeids = [0], target_weights = [-3.0 : f32]"),
            "tensor<?x2xf32>",
        );
        let f = Forest::regressor(&m, op).unwrap();
        assert_eq!(f.always_voted(), vec![false, false]);
        let got = all_scores(&f);
        assert_eq!(got[0], vec![0.0, -3.5]);
        assert_eq!(got[1], vec![0.0, 0.0]);
    }

    fn classifier(votes: &str) -> Result<(Forest, Classify), String> {
        let (m, op) = op_of(
            "TreeEnsembleClassifier",
            &format!("{NODES}, {votes}"),
            "(tensor<?xi64>, tensor<?x2xf32>)",
        );
        Forest::classifier(&m, op)
    }

    fn finish_all(f: &Forest, c: &Classify) -> (Vec<i64>, Vec<Vec<f64>>) {
        let out: Vec<(i64, Vec<f64>)> = ROWS
            .iter()
            .map(|r| c.finish(&f.scores(r), f.post))
            .collect();
        let probs = out
            .iter()
            .map(|(_, p)| p.iter().map(|v| (v * 1e4).round() / 1e4).collect())
            .collect();
        (out.into_iter().map(|(l, _)| l).collect(), probs)
    }

    #[test]
    fn classifiers_follow_onnxruntime() {
        let (f, c) = classifier("class_ids = [0, 1, 2, 1, 2, 0, 1], class_nodeids = [1, 3, 4, 4, 1, 2, 2], \
            class_treeids = [0, 0, 0, 0, 1, 1, 1], classlabels_int64s = [0, 1, 2], \
            class_weights = [0.5 : f32, 0.25 : f32, 0.2 : f32, 0.3 : f32, 0.4 : f32, 0.1 : f32, 0.2 : f32]").unwrap();
        assert_eq!((c.rule, c.scores), (Rule::Argmax, Scores::Columns));
        let (labels, probs) = finish_all(&f, &c);
        assert_eq!(labels, vec![0, 1, 2, 0, 2, 1]);
        assert_eq!(probs[5], vec![0.1, 0.5, 0.2]);
        // Class 0 only, weights >= 0: probabilities of the second class.
        let pos = "class_ids = [0, 0, 0, 0, 0], class_nodeids = [1, 3, 4, 1, 2], \
            class_treeids = [0, 0, 0, 1, 1], classlabels_int64s = [0, 1], \
            class_weights = [0.1 : f32, 0.2 : f32, 0.3 : f32, 0.05 : f32, 0.5 : f32]";
        let (f, c) = classifier(pos).unwrap();
        assert_eq!(c.rule, Rule::Threshold { column: 0, at: 0.5 });
        let (labels, probs) = finish_all(&f, &c);
        assert_eq!(labels, vec![1, 1, 0, 1, 0, 1]);
        assert_eq!(probs[0], vec![0.4, 0.6]);
        assert_eq!(probs[2], vec![0.65, 0.35]);
        // Mixed weights, LOGISTIC, one base value (gradient boosting).
        let mixed = "class_ids = [0, 0, 0, 0, 0], class_nodeids = [1, 3, 4, 1, 2], \
            class_treeids = [0, 0, 0, 1, 1], classlabels_int64s = [0, 1], base_values = [-0.3 : f32], \
            post_transform = \"LOGISTIC\", \
            class_weights = [0.1 : f32, -0.2 : f32, 0.3 : f32, -0.05 : f32, 0.5 : f32]";
        let (f, c) = classifier(mixed).unwrap();
        let (labels, probs) = finish_all(&f, &c);
        assert_eq!(labels, vec![1, 0, 0, 1, 0, 1]);
        assert_eq!(probs[0], vec![0.4256, 0.5744]);
        assert_eq!(probs[1], vec![0.5, 0.5]);
        assert_eq!(probs[2], vec![0.5125, 0.4875]);
    }

    #[test]
    fn malformed_forests_are_refused() {
        // 0 -> (1, 3), 1 -> (2, 3), 2 -> (1, 3): 1 and 2 loop.
        let cycle = "nodes_falsenodeids = [3, 3, 3, 0], nodes_featureids = [0, 0, 0, 0], \
            nodes_modes = [\"BRANCH_LEQ\", \"BRANCH_LEQ\", \"BRANCH_LEQ\", \"LEAF\"], \
            nodes_nodeids = [0, 1, 2, 3], nodes_treeids = [0, 0, 0, 0], \
            nodes_truenodeids = [1, 2, 1, 0], \
            nodes_values = [0.0 : f32, 0.0 : f32, 0.0 : f32, 0.0 : f32]";
        let (m, op) = op_of(
            "TreeEnsembleRegressor",
            &format!("{cycle}, n_targets = 1 : i64"),
            "tensor<?x1xf32>",
        );
        assert!(Forest::regressor(&m, op).unwrap_err().contains("cycle"));
        let two_roots = NODES.replace("nodes_falsenodeids = [2,", "nodes_falsenodeids = [1,");
        let (m, op) = op_of(
            "TreeEnsembleRegressor",
            &format!("{two_roots}, n_targets = 1 : i64"),
            "tensor<?x1xf32>",
        );
        assert!(Forest::regressor(&m, op)
            .unwrap_err()
            .contains("exactly one root"));
        let err = regressor(", aggregate_function = \"MEDIAN\"").unwrap_err();
        assert!(err.contains("MEDIAN"), "{err}");
        let (m, op) = op_of(
            "TreeEnsembleRegressor",
            &format!("{NODES}, n_targets = 4000000000 : i64"),
            "tensor<?x1xf32>",
        );
        assert!(Forest::regressor(&m, op).unwrap_err().contains("targets"));
        let err = classifier(
            "class_ids = [0], class_nodeids = [1], class_treeids = [0], \
            class_weights = [1.0 : f32], classlabels_strings = [\"a\", \"b\"]",
        )
        .unwrap_err();
        assert_eq!(err, STRING_LABELS);
        let err = classifier(
            "class_ids = [0], class_nodeids = [1], class_treeids = [0], \
            class_weights = [1.0 : f32], classlabels_int64s = [0, 1], post_transform = \"PROBIT\"",
        )
        .unwrap_err();
        assert!(err.contains("PROBIT"), "{err}");
        let err = classifier(
            "class_ids = [0], class_nodeids = [2], class_treeids = [0], \
            class_weights = [1.0 : f32], classlabels_int64s = [0, 1]",
        )
        .unwrap_err();
        assert!(err.contains("not a leaf"), "{err}");
    }

    #[test]
    fn label_maps_keep_the_last_repeated_key() {
        let (m, op) = op_of(
            "LabelEncoder",
            "keys_int64s = [3, 1, 3], values_floats = [1.0 : f32, 2.0 : f32, 3.0 : f32]",
            "tensor<?x2xf32>",
        );
        let map = LabelMap::of(&m, op).unwrap();
        let get = |k: i64| map.get(WideNum::from_i64(k)).f64();
        assert_eq!((get(3), get(1), get(2)), (3.0, 2.0, -0.0));
        let (m, op) = op_of(
            "LabelEncoder",
            "keys_floats = [0x7FC00000 : f32, 0.5 : f32], values_int64s = [7, 8], default_int64 = 4",
            "tensor<?x2xi64>",
        );
        let map = LabelMap::of(&m, op).unwrap();
        let get = |k: f64| map.get(WideNum::from_f64(k)).i64();
        assert_eq!((get(f64::NAN), get(0.5), get(0.25)), (7, 8, 4));
    }

    #[test]
    fn post_transforms() {
        let mut r = [1.0, 0.0, 2.0];
        PostTransform::SoftmaxZero.apply(&mut r);
        assert_eq!(r[1], 0.0);
        assert!((r[0] + r[2] - 1.0).abs() < 1e-12);
        let mut z = [0.0, 0.0];
        PostTransform::SoftmaxZero.apply(&mut z);
        assert!(z.iter().all(|v| v.is_nan()));
        let mut l = [0.0];
        PostTransform::Logistic.apply(&mut l);
        assert_eq!(l, [0.5]);
    }

    #[test]
    fn probit_inverts_the_normal_cdf() {
        for (p, z) in [
            (0.5, 0.0),
            (0.1, -1.281_551_6),
            (0.975, 1.959_964),
            (1e-6, -4.753_424),
        ] {
            assert!((probit(p) - z).abs() < 1e-5, "probit({p}) = {}", probit(p));
        }
        assert!(probit(1.5).is_nan());
    }

    #[test]
    fn codes_follow_the_spec() {
        assert_eq!(PostTransform::from_code(1), Ok(PostTransform::Softmax));
        assert_eq!(PostTransform::from_code(2), Ok(PostTransform::Logistic));
        assert_eq!(Aggregate::from_code(0), Ok(Aggregate::Average));
        assert_eq!(Mode::from_code(6), Ok(Mode::Member));
        assert!(Mode::parse("BRANCH_XX").is_err());
    }

    #[test]
    fn nan_fails_ordered_tests_but_not_neq() {
        for m in [
            Mode::Leq,
            Mode::Lt,
            Mode::Gte,
            Mode::Gt,
            Mode::Eq,
            Mode::Member,
        ] {
            assert!(!m.test(f64::NAN, 0.0, &[0.0]), "{m:?}");
        }
        assert!(Mode::Neq.test(f64::NAN, 0.0, &[]));
    }

    #[test]
    fn membership_sets_split_at_nan() {
        let e = Elements::from_wide(
            ir::elements::DType::F64,
            vec![5],
            &[1.0, 2.0, f64::NAN, 7.0, f64::NAN].map(ir::elements::WideNum::from_f64),
        )
        .unwrap();
        let (m, r) = membership_sets(Some(&e), &[6, 0, 6]).unwrap();
        assert_eq!(m, vec![1.0, 2.0, 7.0]);
        assert_eq!(r, vec![(0, 2), (2, 3)]);
        assert!(membership_sets(None, &[6]).is_err());
    }
}
