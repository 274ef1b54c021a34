//! Compilation of one directive's pattern text into a [`Regex`].
//!
//! A pattern is a mix of literal text, `{{regex}}` blocks, `[[NAME:regex]]`
//! variable definitions and `[[NAME]]` variable uses. Uses are only known at
//! match time, so a pattern that contains them is re-compiled for every match
//! with the current variable values spliced in (regex-escaped); all other
//! patterns are compiled once, at parse time.

use std::borrow::Cow;
use std::collections::HashMap;

use regex::{Captures, Regex};

/// Capture-group name prefix for variable definitions. Generated names keep
/// user regexes free to contain their own (numbered) groups.
const GROUP_PREFIX: &str = "__filecheck_def";

/// Why a pattern could not be compiled or instantiated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatternError {
    /// The pattern text itself is malformed.
    Syntax(String),
    /// A `[[NAME]]` use refers to a variable that has no value yet.
    UndefinedVariable(String),
}

#[derive(Debug, Clone)]
enum Piece {
    /// Literal text; horizontal whitespace runs match any non-empty run.
    Literal(String),
    /// Body of a `{{...}}` block, used verbatim.
    Regex(String),
    /// `[[NAME:regex]]`: capture `regex` into `NAME`.
    Define { name: String, regex: String },
    /// `[[NAME]]`: the literal value of a previously captured variable.
    Use(String),
}

/// A parsed pattern, ready to be instantiated into a regex.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    pieces: Vec<Piece>,
    /// Pre-compiled regex for patterns without variable uses, so the common
    /// case pays for compilation once.
    fixed: Option<Regex>,
    /// True when a regex piece mentions `\n`: only then may a match span
    /// several lines (mirrors FileCheck, where matches are line-bound).
    spans_lines: bool,
}

impl Pattern {
    /// Parses `text` (already trimmed, non-empty) and validates the regex
    /// syntax eagerly so malformed tests fail at parse time, with a line.
    pub(crate) fn parse(text: &str) -> Result<Pattern, PatternError> {
        let pieces = split_pieces(text)?;
        check_variables(&pieces)?;
        let spans_lines = pieces.iter().any(|p| match p {
            Piece::Regex(r) | Piece::Define { regex: r, .. } => r.contains("\\n"),
            Piece::Literal(_) | Piece::Use(_) => false,
        });
        let has_uses = pieces.iter().any(|p| matches!(p, Piece::Use(_)));
        let mut pattern = Pattern {
            pieces,
            fixed: None,
            spans_lines,
        };
        // Uses are replaced by an empty group just to validate the syntax.
        let validated = compile(&pattern.render(None)?)?;
        if !has_uses {
            pattern.fixed = Some(validated);
        }
        Ok(pattern)
    }

    /// Names of the variables this pattern defines, in order.
    pub(crate) fn definitions(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Define { name, .. } => Some(name.as_str()),
            _ => None,
        })
    }

    /// Names of the variables this pattern uses.
    pub(crate) fn uses(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Use(name) => Some(name.as_str()),
            _ => None,
        })
    }

    pub(crate) fn spans_lines(&self) -> bool {
        self.spans_lines
    }

    /// The regex to search with, given the current variable values.
    pub(crate) fn regex(
        &self,
        vars: &HashMap<String, String>,
    ) -> Result<Cow<'_, Regex>, PatternError> {
        match &self.fixed {
            Some(re) => Ok(Cow::Borrowed(re)),
            None => Ok(Cow::Owned(compile(&self.render(Some(vars))?)?)),
        }
    }

    /// Values captured by this pattern's definitions in a successful match.
    pub(crate) fn captured(&self, caps: &Captures<'_>) -> Vec<(String, String)> {
        self.definitions()
            .enumerate()
            .filter_map(|(i, name)| {
                let value = caps.name(&format!("{GROUP_PREFIX}{i}"))?;
                Some((name.to_owned(), value.as_str().to_owned()))
            })
            .collect()
    }

    /// Regex source for the pattern. With `vars == None`, uses become an
    /// empty group (syntax validation only).
    fn render(&self, vars: Option<&HashMap<String, String>>) -> Result<String, PatternError> {
        let mut out = String::from("(?m)");
        let mut def_index = 0usize;
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => push_literal(&mut out, text),
                // Grouped so that an alternation stays inside its block.
                Piece::Regex(re) => {
                    out.push_str("(?:");
                    out.push_str(re);
                    out.push(')');
                }
                Piece::Define { regex, .. } => {
                    out.push_str(&format!("(?P<{GROUP_PREFIX}{def_index}>{regex})"));
                    def_index += 1;
                }
                Piece::Use(name) => match vars {
                    None => out.push_str("(?:)"),
                    Some(vars) => {
                        let value = vars
                            .get(name)
                            .ok_or_else(|| PatternError::UndefinedVariable(name.clone()))?;
                        out.push_str(&regex::escape(value));
                    }
                },
            }
        }
        Ok(out)
    }
}

fn compile(source: &str) -> Result<Regex, PatternError> {
    Regex::new(source).map_err(|e| PatternError::Syntax(format!("invalid regex: {e}")))
}

/// Appends escaped literal text, turning each run of spaces/tabs into
/// `[ \t]+` (FileCheck's default whitespace canonicalization).
fn push_literal(out: &mut String, text: &str) {
    let mut chunk = String::new();
    let mut in_space = false;
    for c in text.chars() {
        let is_space = c == ' ' || c == '\t';
        if is_space && !in_space {
            out.push_str(&regex::escape(&chunk));
            chunk.clear();
            out.push_str("[ \\t]+");
        } else if !is_space {
            chunk.push(c);
        }
        in_space = is_space;
    }
    out.push_str(&regex::escape(&chunk));
}

fn split_pieces(text: &str) -> Result<Vec<Piece>, PatternError> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("{{") {
            let end = regex_block_end(after)
                .ok_or_else(|| PatternError::Syntax("unterminated `{{` (missing `}}`)".into()))?;
            let (body, tail) = split_block(after, end)?;
            if body.is_empty() {
                return Err(PatternError::Syntax("empty regex `{{}}`".into()));
            }
            flush_literal(&mut pieces, &mut literal);
            pieces.push(Piece::Regex(body.to_owned()));
            rest = tail;
        } else if let Some(after) = rest.strip_prefix("[[") {
            let end = variable_block_end(after).ok_or_else(|| {
                PatternError::Syntax(
                    "unterminated `[[` (missing `]]`; write `{{\\[\\[}}` for literal brackets)"
                        .into(),
                )
            })?;
            let (body, tail) = split_block(after, end)?;
            flush_literal(&mut pieces, &mut literal);
            pieces.push(parse_variable(body)?);
            rest = tail;
        } else {
            literal.push(c);
            rest = rest.get(c.len_utf8()..).unwrap_or_default();
        }
    }
    flush_literal(&mut pieces, &mut literal);
    Ok(pieces)
}

/// Splits `s` into the block body `s[..end]` and what follows the 2-byte
/// closing delimiter.
fn split_block(s: &str, end: usize) -> Result<(&str, &str), PatternError> {
    let body = s.get(..end);
    let tail = s.get(end + 2..);
    body.zip(tail)
        .ok_or_else(|| PatternError::Syntax("malformed block delimiters".into()))
}

fn flush_literal(pieces: &mut Vec<Piece>, literal: &mut String) {
    if !literal.is_empty() {
        pieces.push(Piece::Literal(std::mem::take(literal)));
    }
}

/// Offset of the closing `}}` of a `{{` block. In a run of `}` the last two
/// close the block, so `{{a{2}}}` is the regex `a{2}`.
fn regex_block_end(s: &str) -> Option<usize> {
    let mut end = s.find("}}")?;
    while s.as_bytes().get(end + 2) == Some(&b'}') {
        end += 1;
    }
    Some(end)
}

/// Offset of the closing `]]` of a `[[` block, skipping brackets that belong
/// to character classes (`[[N:[0-9]]]`) and escaped characters.
fn variable_block_end(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut depth = 0usize;
    let mut i = 0usize;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 1,
            b'[' => depth += 1,
            b']' if depth > 0 => depth -= 1,
            b']' if bytes.get(i + 1) == Some(&b']') => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

fn parse_variable(body: &str) -> Result<Piece, PatternError> {
    if body.starts_with('#') {
        return Err(PatternError::Syntax(format!(
            "numeric variable `[[{body}]]` is not supported"
        )));
    }
    match body.split_once(':') {
        Some((name, regex)) => {
            let name = valid_name(name)?;
            if regex.is_empty() {
                return Err(PatternError::Syntax(format!(
                    "variable `{name}` is defined with an empty regex"
                )));
            }
            Ok(Piece::Define {
                name,
                regex: regex.to_owned(),
            })
        }
        None => Ok(Piece::Use(valid_name(body)?)),
    }
}

/// Validates a variable name; a leading `$` (FileCheck's "global" marker) is
/// accepted and dropped since all variables are global here.
fn valid_name(raw: &str) -> Result<String, PatternError> {
    let name = raw.strip_prefix('$').unwrap_or(raw);
    let mut chars = name.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(name.to_owned())
    } else {
        Err(PatternError::Syntax(format!(
            "invalid variable name `{raw}` (write `{{{{\\[\\[}}}}` to match literal `[[`)"
        )))
    }
}

/// Rejects what the `regex` crate cannot express: a pattern using a variable
/// it defines itself would need a backreference.
fn check_variables(pieces: &[Piece]) -> Result<(), PatternError> {
    let mut defined: Vec<&str> = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Define { name, .. } => {
                if defined.contains(&name.as_str()) {
                    return Err(PatternError::Syntax(format!(
                        "variable `{name}` is defined twice in one pattern"
                    )));
                }
                defined.push(name);
            }
            Piece::Use(name) if defined.contains(&name.as_str()) => {
                return Err(PatternError::Syntax(format!(
                    "variable `{name}` is used in the pattern that defines it (backreferences are not supported)"
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(text: &str) -> String {
        Pattern::parse(text).unwrap().render(None).unwrap()
    }

    #[test]
    fn literal_is_escaped_and_whitespace_canonicalized() {
        assert_eq!(src("a.b  c"), "(?m)a\\.b[ \\t]+c");
    }

    #[test]
    fn regex_block_is_grouped() {
        assert_eq!(src("x{{a|b}}y"), "(?m)x(?:a|b)y");
    }

    #[test]
    fn closing_brace_run_belongs_to_regex() {
        assert_eq!(src("{{a{2}}}"), "(?m)(?:a{2})");
    }

    #[test]
    fn definition_with_character_class() {
        let p = Pattern::parse("%[[N:[0-9]+]] = add").unwrap();
        assert_eq!(p.definitions().collect::<Vec<_>>(), ["N"]);
        let re = p.regex(&HashMap::new()).unwrap();
        let caps = re.captures("%42 = add").unwrap();
        assert_eq!(p.captured(&caps), [("N".to_owned(), "42".to_owned())]);
    }

    #[test]
    fn nested_brackets_in_definition() {
        let p = Pattern::parse("[[V:[[:alpha:]]+]]").unwrap();
        assert_eq!(p.definitions().collect::<Vec<_>>(), ["V"]);
    }

    #[test]
    fn use_is_escaped_value() {
        let p = Pattern::parse("x [[V]]").unwrap();
        let vars = HashMap::from([("V".to_owned(), "a.b".to_owned())]);
        let re = p.regex(&vars).unwrap();
        assert!(re.is_match("x a.b"));
        assert!(!re.is_match("x axb"));
    }

    #[test]
    fn malformed_patterns_are_rejected() {
        for bad in [
            "{{a",
            "[[X",
            "{{}}",
            "[[#N]]",
            "[[1x]]",
            "[[X:]]",
            "[[X:a]] [[X]]",
            "[[X:a]] [[X:b]]",
            "{{(}}",
        ] {
            assert!(
                matches!(Pattern::parse(bad), Err(PatternError::Syntax(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn undefined_use_reported_at_instantiation() {
        let p = Pattern::parse("[[Y]]").unwrap();
        assert_eq!(
            p.regex(&HashMap::new()).unwrap_err(),
            PatternError::UndefinedVariable("Y".into())
        );
    }

    #[test]
    fn spans_lines_only_with_explicit_newline() {
        assert!(!Pattern::parse("a{{.*}}").unwrap().spans_lines());
        assert!(Pattern::parse("a{{\\n}}b").unwrap().spans_lines());
    }
}
