//! What a user may fix at import: the sizes of graph inputs'
//! dims (`--input-shape NAME=1x3x?x?`, like onnx-mlir's
//! `--shapeInformation` and onnx-simplifier's `--overwrite-input-shape`).
//! Applied before inference, so constant propagation then folds the shape
//! arithmetic that depended on them.

use crate::load::LoadedModel;

/// One input's dims: `Some(n)` fixes a dim, `None` (`?`) keeps it dynamic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputShape {
    pub name: String,
    pub dims: Vec<Option<i64>>,
}

impl InputShape {
    /// Parses `NAME=1x3x640x640`, `NAME=?x3x224x224`; `NAME=` is a scalar.
    /// The name may itself contain `=`: the last one separates.
    pub fn parse(s: &str) -> Result<InputShape, String> {
        let (name, dims) = s
            .rsplit_once('=')
            .ok_or_else(|| format!("'{s}': expected NAME=DIMS, e.g. x=1x3x224x224"))?;
        if name.is_empty() {
            return Err(format!("'{s}': the input name is empty"));
        }
        let dims = if dims.is_empty() {
            Vec::new()
        } else {
            dims.split('x')
                .map(|d| match d {
                    "?" => Ok(None),
                    _ => d
                        .parse::<i64>()
                        .ok()
                        .filter(|&n| n >= 0)
                        .map(Some)
                        .ok_or_else(|| format!("'{s}': bad dim '{d}' (a size >= 0 or ?)")),
                })
                .collect::<Result<_, _>>()?
        };
        Ok(InputShape {
            name: name.to_string(),
            dims,
        })
    }
}

/// The form `parse` reads: `NAME=1x3x?x?`.
impl std::fmt::Display for InputShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dims: Vec<String> = self
            .dims
            .iter()
            .map(|d| d.map_or("?".into(), |n| n.to_string()))
            .collect();
        write!(f, "{}={}", self.name, dims.join("x"))
    }
}

/// Options of [`super::import_model_with`].
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    pub input_shapes: Vec<InputShape>,
    /// Carry what onnxc does not know (other domains, unknown operators,
    /// string and sequence values) through as `onnx.Foreign` ops and
    /// foreign types instead of refusing it: for a fold, which writes
    /// them back (a compile leaves it off: they cannot run).
    pub keep_foreign: bool,
}

impl ImportOptions {
    /// Checks the shapes against the model's graph inputs: every name must
    /// be an input (not an initializer), given once, with the input's rank
    /// when it declares one. The message names the input; callers report
    /// it as a usage error.
    pub fn check(&self, model: &LoadedModel) -> Result<(), String> {
        let Some(g) = model.proto.graph.as_ref() else {
            return Ok(());
        };
        let init: std::collections::HashSet<&str> =
            g.initializer.iter().map(|t| t.name.as_str()).collect();
        for (i, s) in self.input_shapes.iter().enumerate() {
            if self.input_shapes[..i].iter().any(|o| o.name == s.name) {
                return Err(format!("--input-shape gives '{}' twice", s.name));
            }
            let vi = g
                .input
                .iter()
                .find(|vi| vi.name == s.name && !init.contains(vi.name.as_str()));
            let Some(vi) = vi else {
                let names: Vec<&str> = g
                    .input
                    .iter()
                    .filter(|vi| !init.contains(vi.name.as_str()))
                    .map(|vi| vi.name.as_str())
                    .collect();
                return Err(format!(
                    "--input-shape names '{}', which is not an input of the model (inputs: {})",
                    s.name,
                    names.join(", ")
                ));
            };
            if let Some(rank) = super::types::declared_rank(vi.r#type.as_ref()) {
                if rank != s.dims.len() {
                    return Err(format!(
                        "--input-shape gives input '{}' rank {}, but the model declares rank {rank}",
                        s.name,
                        s.dims.len()
                    ));
                }
            }
        }
        Ok(())
    }

    /// The shape given for input `name`.
    pub fn shape_of(&self, name: &str) -> Option<&InputShape> {
        self.input_shapes.iter().find(|s| s.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_sizes_and_dynamic_dims() {
        let s = InputShape::parse("images=?x3x640x640").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.name, "images");
        assert_eq!(s.dims, vec![None, Some(3), Some(640), Some(640)]);
        let s = InputShape::parse("a=b=2").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (s.name.as_str(), s.dims.as_slice()),
            ("a=b", &[Some(2)][..])
        );
        assert_eq!(InputShape::parse("scalar=").map(|s| s.dims), Ok(Vec::new()));
        assert!(InputShape::parse("x").is_err());
        assert!(InputShape::parse("=1x2").is_err());
        assert!(InputShape::parse("x=1x-2").is_err());
        assert!(InputShape::parse("x=1xN").is_err());
    }
}
