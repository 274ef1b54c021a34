//! A FileCheck-style matcher for compiler output, following the semantics
//! of LLVM's `FileCheck` so tests read the same way they would in LLVM.
//!
//! A test file carries directives such as `// CHECK: define void @f` or
//! `; CHECK-NEXT: ret void`; [`parse_checks`] extracts them and [`run`]
//! verifies them against the output. Supported directives: `CHECK`,
//! `CHECK-NEXT`, `CHECK-SAME`, `CHECK-NOT`, `CHECK-LABEL`, `CHECK-DAG`,
//! `CHECK-EMPTY` and `CHECK-COUNT-<n>`. Patterns may contain `{{regex}}`,
//! `[[NAME:regex]]` (define) and `[[NAME]]` (use).
//!
//! Differences from LLVM FileCheck, kept deliberately small:
//! - regexes use the `regex` crate's syntax (no backreferences, so a pattern
//!   cannot use a variable it defines itself); numeric `[[#...]]` variables,
//!   `COM:` directives and options such as `--match-full-lines` are not
//!   supported;
//! - variables are global; a `CHECK-LABEL` may define but not use them;
//! - a match never spans lines unless one of its regexes mentions `\n`;
//! - whitespace canonicalization applies to literal text only, not inside
//!   `{{...}}`;
//! - a check before a label must end before the label's match begins.
//!
//! ```
//! let test = "
//!     // CHECK-LABEL: define i32 @f
//!     // CHECK: %[[X:[0-9]+]] = add
//!     // CHECK-NEXT: ret i32 %[[X]]
//! ";
//! let output = "define i32 @f() {\n  %1 = add i32 0, 1\n  ret i32 %1\n}\n";
//! filecheck::check(test, output).unwrap();
//! ```

mod matcher;
mod pattern;

use std::collections::HashSet;
use std::fmt;

use pattern::{Pattern, PatternError};

/// Options for [`check_with_options`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOptions {
    /// Directive prefix; `CHECK` gives `CHECK:`, `CHECK-NEXT:`, ...
    pub prefix: String,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            prefix: "CHECK".to_owned(),
        }
    }
}

/// The directive kind, i.e. the suffix after the prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    /// `CHECK:` match anywhere at or after the previous match.
    Plain,
    /// `CHECK-NEXT:` match on the line right after the previous match.
    Next,
    /// `CHECK-SAME:` match on the same line, after the previous match.
    Same,
    /// `CHECK-NOT:` must not occur between the surrounding positive matches.
    Not,
    /// `CHECK-LABEL:` splits the output into independently checked blocks.
    Label,
    /// `CHECK-DAG:` consecutive DAG checks match in any order.
    Dag,
    /// `CHECK-EMPTY:` the line after the previous match is empty.
    Empty,
    /// `CHECK-COUNT-n:` the pattern matches `n` times in sequence.
    Count(usize),
}

impl CheckKind {
    fn suffix(self) -> String {
        match self {
            CheckKind::Plain => String::new(),
            CheckKind::Next => "-NEXT".into(),
            CheckKind::Same => "-SAME".into(),
            CheckKind::Not => "-NOT".into(),
            CheckKind::Label => "-LABEL".into(),
            CheckKind::Dag => "-DAG".into(),
            CheckKind::Empty => "-EMPTY".into(),
            CheckKind::Count(n) => format!("-COUNT-{n}"),
        }
    }

    /// Kinds that consume output (everything but `NOT`).
    fn is_positive(self) -> bool {
        self != CheckKind::Not
    }
}

/// One directive parsed from the test file.
#[derive(Debug, Clone)]
pub struct Check {
    kind: CheckKind,
    line: usize,
    directive: String,
    text: String,
    /// `None` only for `CHECK-EMPTY`, which has no pattern.
    pattern: Option<Pattern>,
}

impl Check {
    pub fn kind(&self) -> CheckKind {
        self.kind
    }

    /// 1-based line of the directive in the test file.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The directive as written, e.g. `CHECK-NEXT`.
    pub fn directive(&self) -> &str {
        &self.directive
    }

    /// The pattern text (trimmed), as written in the test file.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// Why parsing or checking failed. The `Display` output is meant to be read
/// directly in a test failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error(
        "invalid check prefix `{0}`: it must start with a letter and contain only letters, digits, `-` and `_`"
    )]
    InvalidPrefix(String),
    #[error("no `{prefix}:` directives found in the test file")]
    NoChecks { prefix: String },
    #[error("test file line {line}: {directive}: {message}")]
    Parse {
        line: usize,
        directive: String,
        message: String,
    },
    #[error("{0}")]
    Mismatch(Box<Mismatch>),
}

/// A directive that did not hold on the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// 1-based line of the failing directive in the test file.
    pub line: usize,
    /// The directive, e.g. `CHECK-NEXT`.
    pub directive: String,
    /// The directive's pattern text.
    pub pattern: String,
    /// What went wrong.
    pub message: String,
    /// 1-based output line the diagnostic points at.
    pub output_line: usize,
    /// A few numbered output lines around `output_line`.
    pub snippet: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "test file line {}: {}: {}",
            self.line, self.directive, self.pattern
        )?;
        writeln!(f, "  error: {}", self.message)?;
        writeln!(f, "  output near line {}:", self.output_line)?;
        write!(f, "{}", self.snippet)
    }
}

/// Parses the `prefix` directives of `test_source`, validating patterns and
/// variable use up front so that test-file mistakes are reported by line.
pub fn parse_checks(test_source: &str, prefix: &str) -> Result<Vec<Check>, CheckError> {
    if !valid_prefix(prefix) {
        return Err(CheckError::InvalidPrefix(prefix.to_owned()));
    }
    let mut checks: Vec<Check> = Vec::new();
    let mut defined: HashSet<String> = HashSet::new();
    for (index, source_line) in test_source.lines().enumerate() {
        let Some((kind, body)) = find_directive(source_line, prefix) else {
            continue;
        };
        let line = index + 1;
        let directive = format!("{prefix}{}", kind.suffix());
        let text = body.trim_matches(|c| c == ' ' || c == '\t');
        let fail = |message: String| CheckError::Parse {
            line,
            directive: directive.clone(),
            message,
        };

        if kind == CheckKind::Count(0) {
            return Err(fail("the count must be a positive integer".into()));
        }
        let needs_previous = matches!(kind, CheckKind::Next | CheckKind::Same | CheckKind::Empty);
        if needs_previous && !checks.iter().any(|c| c.kind.is_positive()) {
            return Err(fail("there is no previous match for it to follow".into()));
        }

        let pattern = if kind == CheckKind::Empty {
            if !text.is_empty() {
                return Err(fail("CHECK-EMPTY takes no pattern".into()));
            }
            None
        } else {
            if text.is_empty() {
                return Err(fail("the pattern is empty".into()));
            }
            let pattern = Pattern::parse(text).map_err(|e| match e {
                PatternError::Syntax(m) => fail(m),
                PatternError::UndefinedVariable(v) => fail(format!("undefined variable `{v}`")),
            })?;
            if kind == CheckKind::Label && pattern.uses().next().is_some() {
                return Err(fail(
                    "labels are matched before the checks that precede them, so they cannot use variables".into(),
                ));
            }
            if kind == CheckKind::Not && pattern.definitions().next().is_some() {
                return Err(fail(
                    "a CHECK-NOT never matches, so it cannot define variables".into(),
                ));
            }
            if let Some(name) = pattern.uses().find(|u| !defined.contains(*u)) {
                return Err(fail(format!(
                    "variable `{name}` is used before any directive defines it"
                )));
            }
            defined.extend(pattern.definitions().map(str::to_owned));
            Some(pattern)
        };
        checks.push(Check {
            kind,
            line,
            directive,
            text: text.to_owned(),
            pattern,
        });
    }
    if checks.is_empty() {
        return Err(CheckError::NoChecks {
            prefix: prefix.to_owned(),
        });
    }
    Ok(checks)
}

/// Verifies parsed `checks` against `output`.
pub fn run(checks: &[Check], output: &str) -> Result<(), CheckError> {
    matcher::run(checks, output)
}

/// Parses `CHECK` directives from `test_source` and verifies them on `output`.
pub fn check(test_source: &str, output: &str) -> Result<(), CheckError> {
    check_with_options(test_source, output, &CheckOptions::default())
}

/// Like [`check`], with a custom prefix.
pub fn check_with_options(
    test_source: &str,
    output: &str,
    options: &CheckOptions,
) -> Result<(), CheckError> {
    run(&parse_checks(test_source, &options.prefix)?, output)
}

fn valid_prefix(prefix: &str) -> bool {
    let mut chars = prefix.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Finds the first directive on `line`: `prefix` not glued to a preceding
/// word (so `MYCHECK:` is not `CHECK:`), followed by a known suffix and `:`.
/// Returns the kind and the text after the colon.
fn find_directive<'l>(line: &'l str, prefix: &str) -> Option<(CheckKind, &'l str)> {
    let mut from = 0;
    while let Some(offset) = line.get(from..)?.find(prefix) {
        let at = from + offset;
        from = at + 1;
        let glued = line
            .get(..at)
            .and_then(|before| before.chars().next_back())
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
        if glued {
            continue;
        }
        if let Some(found) = line.get(at + prefix.len()..).and_then(parse_suffix) {
            return Some(found);
        }
    }
    None
}

fn parse_suffix(after: &str) -> Option<(CheckKind, &str)> {
    if let Some(body) = after.strip_prefix(':') {
        return Some((CheckKind::Plain, body));
    }
    let suffix = after.strip_prefix('-')?;
    let named = [
        ("NEXT:", CheckKind::Next),
        ("SAME:", CheckKind::Same),
        ("NOT:", CheckKind::Not),
        ("LABEL:", CheckKind::Label),
        ("DAG:", CheckKind::Dag),
        ("EMPTY:", CheckKind::Empty),
    ];
    for (name, kind) in named {
        if let Some(body) = suffix.strip_prefix(name) {
            return Some((kind, body));
        }
    }
    let count = suffix.strip_prefix("COUNT-")?;
    let digits = count.bytes().take_while(u8::is_ascii_digit).count();
    let (number, rest) = count.split_at_checked(digits)?;
    let body = rest.strip_prefix(':')?;
    // An unrepresentable count is reported like a zero count.
    Some((CheckKind::Count(number.parse().unwrap_or(0)), body))
}

#[cfg(test)]
mod tests;
