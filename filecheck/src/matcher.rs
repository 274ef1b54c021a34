//! Running parsed checks over the output text.
//!
//! Positions are byte offsets into the output. The state threaded through a
//! block is the end of the previous positive match: plain checks search from
//! there, `NEXT`/`SAME`/`EMPTY` count newlines from there (as FileCheck does),
//! and pending `NOT`s are checked between it and the next positive match.

use std::borrow::Cow;
use std::collections::HashMap;

use regex::{Captures, Regex};

use crate::pattern::{Pattern, PatternError};
use crate::{Check, CheckError, CheckKind, Mismatch};

/// Output lines shown before / after the line a diagnostic points at.
const SNIPPET_BEFORE: usize = 2;
const SNIPPET_AFTER: usize = 4;
/// Longer output lines are cut in snippets to keep messages readable.
const SNIPPET_MAX_CHARS: usize = 160;

/// A successful match: byte range plus the variables it captured.
struct Found {
    start: usize,
    end: usize,
    captured: Vec<(String, String)>,
}

/// A `CHECK-NOT` whose regex was instantiated when it was reached, so that
/// variables redefined by the following positive match do not leak into it.
struct PendingNot<'c> {
    check: &'c Check,
    pattern: &'c Pattern,
    regex: Regex,
}

pub(crate) fn run(checks: &[Check], output: &str) -> Result<(), CheckError> {
    let mut matcher = Matcher {
        output,
        vars: HashMap::new(),
    };
    // Each label is located first; the checks before it are then confined to
    // the region between the previous label and this one.
    let mut pos = 0;
    let mut rest = checks;
    while let Some(label_index) = rest.iter().position(|c| c.kind == CheckKind::Label) {
        let (block, from_label) = rest.split_at(label_index);
        let Some((label, after)) = from_label.split_first() else {
            break;
        };
        let found = matcher.find_label(label, pos)?;
        matcher.run_block(block, pos, found.start)?;
        // Applied only now so the preceding block still saw the old values.
        matcher.define(found.captured);
        pos = found.end;
        rest = after;
    }
    matcher.run_block(rest, pos, output.len())
}

struct Matcher<'o> {
    output: &'o str,
    vars: HashMap<String, String>,
}

impl<'o> Matcher<'o> {
    /// Runs the checks of one label block over `output[start..end]`.
    fn run_block(&mut self, checks: &[Check], start: usize, end: usize) -> Result<(), CheckError> {
        let mut last = start;
        let mut nots: Vec<PendingNot<'_>> = Vec::new();
        let mut index = 0;
        while let Some(check) = checks.get(index) {
            match check.kind {
                CheckKind::Not => {
                    let pattern = pattern_of(check)?;
                    let regex = self.instantiate(check, pattern)?.into_owned();
                    nots.push(PendingNot {
                        check,
                        pattern,
                        regex,
                    });
                    index += 1;
                }
                CheckKind::Dag => {
                    let group_len = checks
                        .get(index..)
                        .unwrap_or_default()
                        .iter()
                        .take_while(|c| c.kind == CheckKind::Dag)
                        .count();
                    let group = checks.get(index..index + group_len).unwrap_or_default();
                    let (first_start, group_end) = self.match_dag(group, last, end)?;
                    self.check_nots(&nots, last, first_start)?;
                    nots.clear();
                    last = group_end;
                    index += group_len;
                }
                _ => {
                    let found = self.match_positive(check, last, end)?;
                    self.check_nots(&nots, last, found.start)?;
                    nots.clear();
                    self.define(found.captured);
                    last = found.end;
                    index += 1;
                }
            }
        }
        self.check_nots(&nots, last, end)
    }

    fn define(&mut self, captured: Vec<(String, String)>) {
        self.vars.extend(captured);
    }

    fn instantiate<'p>(
        &self,
        check: &Check,
        pattern: &'p Pattern,
    ) -> Result<Cow<'p, Regex>, CheckError> {
        pattern.regex(&self.vars).map_err(|e| {
            let message = match e {
                PatternError::UndefinedVariable(name) => format!("variable `{name}` is undefined"),
                PatternError::Syntax(m) => m,
            };
            self.mismatch(check, message, 0)
        })
    }

    /// First match of `check`'s pattern within `output[from..to]`.
    fn find(&self, check: &Check, from: usize, to: usize) -> Result<Option<Found>, CheckError> {
        let pattern = pattern_of(check)?;
        let regex = self.instantiate(check, pattern)?;
        Ok(self.search(pattern, &regex, from, to))
    }

    fn search(&self, pattern: &Pattern, regex: &Regex, from: usize, to: usize) -> Option<Found> {
        let caps = search(regex, self.output, from, to, pattern.spans_lines())?;
        let whole = caps.get(0)?;
        Some(Found {
            start: whole.start(),
            end: whole.end(),
            captured: pattern.captured(&caps),
        })
    }

    fn find_label(&self, label: &Check, from: usize) -> Result<Found, CheckError> {
        self.find(label, from, self.output.len())?.ok_or_else(|| {
            self.mismatch(
                label,
                "label not found in the output (searched from the marked line on)".into(),
                from,
            )
        })
    }

    fn match_positive(&self, check: &Check, from: usize, to: usize) -> Result<Found, CheckError> {
        match check.kind {
            CheckKind::Next => self.match_next(check, from, to),
            CheckKind::Same => self.match_same(check, from, to),
            CheckKind::Empty => self.match_empty(check, from, to),
            CheckKind::Count(n) => self.match_count(check, n, from, to),
            CheckKind::Plain | CheckKind::Label | CheckKind::Dag | CheckKind::Not => {
                self.find(check, from, to)?.ok_or_else(|| {
                    self.mismatch(
                        check,
                        "no match found (searched from the marked line on)".into(),
                        from,
                    )
                })
            }
        }
    }

    fn match_next(&self, check: &Check, from: usize, to: usize) -> Result<Found, CheckError> {
        // Searching only up to the end of the next line is equivalent to
        // FileCheck's "first match must be on the next line" and cheaper.
        let next_line_end = line_end(self.output, line_end(self.output, from).saturating_add(1));
        let found = self.find(check, from, next_line_end.min(to))?;
        match found {
            Some(found) if self.newlines(from, found.start) == 1 => Ok(found),
            Some(found) => Err(self.mismatch(
                check,
                "found on the same line as the previous match, expected on the next line".into(),
                found.start,
            )),
            None => {
                let message = match self.find(check, from, to)? {
                    Some(later) => format!(
                        "expected on the line after the previous match (output line {}), but first found on output line {}",
                        self.line_of(from),
                        self.line_of(later.start)
                    ),
                    None => format!(
                        "expected on the line after the previous match (output line {}), but not found at all",
                        self.line_of(from)
                    ),
                };
                Err(self.mismatch(check, message, from))
            }
        }
    }

    fn match_same(&self, check: &Check, from: usize, to: usize) -> Result<Found, CheckError> {
        let end = line_end(self.output, from).min(to);
        if let Some(found) = self.find(check, from, end)? {
            return Ok(found);
        }
        let message = match self.find(check, from, to)? {
            Some(later) => format!(
                "expected on the same line as the previous match, but first found on output line {}",
                self.line_of(later.start)
            ),
            None => "expected on the same line as the previous match, but not found at all".into(),
        };
        Err(self.mismatch(check, message, from))
    }

    fn match_empty(&self, check: &Check, from: usize, to: usize) -> Result<Found, CheckError> {
        let start = line_end(self.output, from).saturating_add(1);
        let empty = start < to && self.output.as_bytes().get(start) == Some(&b'\n');
        if empty {
            Ok(Found {
                start,
                end: start,
                captured: Vec::new(),
            })
        } else {
            Err(self.mismatch(
                check,
                "expected an empty line after the previous match's line".into(),
                start.min(self.output.len()),
            ))
        }
    }

    fn match_count(
        &self,
        check: &Check,
        n: usize,
        from: usize,
        to: usize,
    ) -> Result<Found, CheckError> {
        let mut first_start = None;
        let mut last_end = from;
        let mut captured = Vec::new();
        let mut pos = from;
        for done in 0..n {
            let Some(found) = self.find(check, pos, to)? else {
                return Err(self.mismatch(
                    check,
                    format!("expected {n} matches, found only {done} (the next search starts at the marked line)"),
                    pos,
                ));
            };
            first_start.get_or_insert(found.start);
            last_end = found.end;
            // Step past an empty match, or it would be found again forever.
            pos = if found.end == found.start {
                next_char_boundary(self.output, found.end)
            } else {
                found.end
            };
            captured = found.captured;
        }
        Ok(Found {
            start: first_start.unwrap_or(from),
            end: last_end,
            captured,
        })
    }

    /// Matches a group of `CHECK-DAG`s in any order without overlaps.
    /// Returns the earliest start and the latest end among the matches.
    fn match_dag(
        &mut self,
        group: &[Check],
        from: usize,
        to: usize,
    ) -> Result<(usize, usize), CheckError> {
        let mut taken: Vec<(usize, usize)> = Vec::new();
        for check in group {
            let pattern = pattern_of(check)?;
            let regex = self.instantiate(check, pattern)?.into_owned();
            let mut at = from;
            let found = loop {
                let Some(found) = self.search(pattern, &regex, at, to) else {
                    let message = if taken.is_empty() {
                        "no match found (searched from the marked line on)".into()
                    } else {
                        "no match found that does not overlap an earlier CHECK-DAG match in the group".into()
                    };
                    return Err(self.mismatch(check, message, from));
                };
                let overlap = taken
                    .iter()
                    .find(|&&(s, e)| overlaps((found.start, found.end), (s, e)));
                match overlap {
                    // Retry after the match we collided with, as FileCheck does.
                    Some(&(_, e)) => at = e.max(next_char_boundary(self.output, at)),
                    None => break found,
                }
            };
            taken.push((found.start, found.end));
            self.define(found.captured);
        }
        let first = taken.iter().map(|&(s, _)| s).min().unwrap_or(from);
        let last = taken.iter().map(|&(_, e)| e).max().unwrap_or(from);
        Ok((first, last))
    }

    fn check_nots(
        &self,
        nots: &[PendingNot<'_>],
        from: usize,
        to: usize,
    ) -> Result<(), CheckError> {
        for not in nots {
            if let Some(found) = self.search(not.pattern, &not.regex, from, to) {
                return Err(self.mismatch(
                    not.check,
                    format!(
                        "excluded pattern found on output line {}",
                        self.line_of(found.start)
                    ),
                    found.start,
                ));
            }
        }
        Ok(())
    }

    fn newlines(&self, from: usize, to: usize) -> usize {
        self.output
            .get(from..to)
            .map_or(0, |s| s.bytes().filter(|&b| b == b'\n').count())
    }

    /// 1-based line number of byte `pos`.
    fn line_of(&self, pos: usize) -> usize {
        self.newlines(0, pos.min(self.output.len())) + 1
    }

    fn mismatch(&self, check: &Check, message: String, focus: usize) -> CheckError {
        let output_line = self.line_of(focus);
        CheckError::Mismatch(Box::new(Mismatch {
            line: check.line,
            directive: check.directive.clone(),
            pattern: check.text.clone(),
            message,
            output_line,
            snippet: snippet(self.output, output_line),
        }))
    }
}

/// Every directive but `CHECK-EMPTY` has a pattern; parsing guarantees it.
fn pattern_of(check: &Check) -> Result<&Pattern, CheckError> {
    check.pattern.as_ref().ok_or_else(|| CheckError::Parse {
        line: check.line,
        directive: check.directive.clone(),
        message: "directive has no pattern".into(),
    })
}

/// Leftmost match of `regex` in `output[from..to]`. Unless the pattern may
/// span lines, matches are confined to a single line: a multi-line candidate
/// is re-searched within its own line, then the search moves to the next.
fn search<'h>(
    regex: &Regex,
    output: &'h str,
    from: usize,
    to: usize,
    spans_lines: bool,
) -> Option<Captures<'h>> {
    let haystack = output.get(..to)?;
    let mut at = from;
    while at <= to {
        let caps = regex.captures_at(haystack, at)?;
        let whole = caps.get(0)?;
        if spans_lines || !whole.as_str().contains('\n') {
            return Some(caps);
        }
        // No match starts before `whole.start()`, so only its line and the
        // lines after it can hold a single-line match.
        let end = line_end(haystack, whole.start());
        if let Some(caps) = haystack
            .get(..end)
            .and_then(|line| regex.captures_at(line, whole.start()))
        {
            return Some(caps);
        }
        at = end + 1;
    }
    None
}

/// Offset of the `\n` ending the line that contains `pos` (or the text end).
fn line_end(text: &str, pos: usize) -> usize {
    text.get(pos..)
        .and_then(|rest| rest.find('\n'))
        .map_or(text.len(), |i| pos + i)
}

fn next_char_boundary(text: &str, pos: usize) -> usize {
    let mut next = pos + 1;
    while next < text.len() && !text.is_char_boundary(next) {
        next += 1;
    }
    next
}

/// Half-open ranges overlap; an empty range overlaps a range strictly
/// containing its position, and equal empty ranges collide too.
fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    (a.0 < b.1 && b.0 < a.1) || a == b
}

/// Numbered output lines around 1-based `line`, the line itself marked `>`.
fn snippet(output: &str, line: usize) -> String {
    let first = line.saturating_sub(SNIPPET_BEFORE).max(1);
    let mut text = String::new();
    for (number, content) in output
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .skip(first - 1)
        .take(line + SNIPPET_AFTER + 1 - first)
    {
        let marker = if number == line { '>' } else { ' ' };
        let mut shown: String = content.chars().take(SNIPPET_MAX_CHARS).collect();
        if shown.len() < content.len() {
            shown.push_str(" ...");
        }
        let row = format!("  {marker}{number:>5} | {shown}");
        text.push_str(row.trim_end());
        text.push('\n');
    }
    if text.is_empty() {
        text.push_str("  (output is empty)\n");
    }
    text
}
