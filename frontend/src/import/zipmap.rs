//! ai.onnx.ml ZipMap on a graph output (skl2onnx's default for
//! classifiers): a sequence of {class: probability} maps, which compiled
//! code returns in its tensor form, the probabilities [N, C], with the
//! class labels recorded per output (`ZIPMAP_ATTR`) for the header and
//! for the Python session, which builds the maps as onnxruntime does.

use crate::proto::{GraphProto, NodeProto};
use ir::Attribute;

/// On the main function: per graph output, the ZipMap's class labels
/// (an array of ints or strings), or unit when no ZipMap makes it.
pub const ZIPMAP_ATTR: &str = "onnx.output_zipmap";

/// The class labels of a ZipMap.
#[derive(Clone, Debug, PartialEq)]
pub enum Labels {
    Ints(Vec<i64>),
    Strings(Vec<String>),
}

impl Labels {
    fn of(node: &NodeProto) -> Option<Labels> {
        let attr = |name: &str| node.attribute.iter().find(|a| a.name == name);
        if let Some(a) = attr("classlabels_int64s") {
            return Some(Labels::Ints(a.ints.clone()));
        }
        let a = attr("classlabels_strings")?;
        Some(Labels::Strings(
            a.strings
                .iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect(),
        ))
    }

    pub fn len(&self) -> usize {
        match self {
            Labels::Ints(v) => v.len(),
            Labels::Strings(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn to_attr(&self) -> Attribute {
        match self {
            Labels::Ints(v) => Attribute::Array(v.iter().map(|&x| Attribute::i64(x)).collect()),
            Labels::Strings(v) => {
                Attribute::Array(v.iter().map(|s| Attribute::string(s)).collect())
            }
        }
    }

    /// The labels as the header lists them.
    pub fn text(&self) -> String {
        match self {
            Labels::Ints(v) => v.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
            Labels::Strings(v) => v
                .iter()
                .map(|s| format!("'{s}'"))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// Labels read back from `ZIPMAP_ATTR`'s entry.
    pub fn from_attr(a: &Attribute) -> Option<Labels> {
        let items = a.as_array()?;
        if let Some(ints) = items
            .iter()
            .map(Attribute::as_int)
            .collect::<Option<Vec<_>>>()
        {
            return Some(Labels::Ints(ints));
        }
        let strings = items.iter().map(|s| s.as_str().map(str::to_string));
        strings.collect::<Option<Vec<_>>>().map(Labels::Strings)
    }
}

/// The ZipMap node that makes `name`, if any.
pub(super) fn maker<'g>(g: &'g GraphProto, name: &str) -> Option<&'g NodeProto> {
    g.node.iter().find(|n| {
        n.op_type == "ZipMap" && n.domain == "ai.onnx.ml" && n.output.iter().any(|o| o == name)
    })
}

/// Per graph output of `g`: the labels of the ZipMap that makes it.
pub fn zipmap_outputs(g: &GraphProto) -> Vec<Option<Labels>> {
    g.output
        .iter()
        .map(|vi| maker(g, &vi.name).and_then(Labels::of))
        .collect()
}
