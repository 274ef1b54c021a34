use super::*;

/// Runs `test` against `output`, returning the mismatch (panics on other errors).
fn mismatch(test: &str, output: &str) -> Mismatch {
    match check(test, output) {
        Err(CheckError::Mismatch(m)) => *m,
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

fn parse_error(test: &str) -> (usize, String) {
    match parse_checks(test, "CHECK") {
        Err(CheckError::Parse { line, message, .. }) => (line, message),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

const IR: &str = "\
define i32 @f(i32 %a) {
entry:
  %1 = add i32 %a, 1
  %2 = mul i32 %1, 2
  ret i32 %2
}

define void @g() {
  call void @f()
  ret void
}
";

#[test]
fn parses_all_directive_kinds() {
    let test = "\
// CHECK: a
// CHECK-NEXT: b
// CHECK-SAME: c
// CHECK-NOT: d
// CHECK-LABEL: e
// CHECK-DAG: f
// CHECK-EMPTY:
// CHECK-COUNT-3: g
plain text without directives
";
    let checks = parse_checks(test, "CHECK").unwrap();
    let kinds: Vec<_> = checks.iter().map(Check::kind).collect();
    assert_eq!(
        kinds,
        [
            CheckKind::Plain,
            CheckKind::Next,
            CheckKind::Same,
            CheckKind::Not,
            CheckKind::Label,
            CheckKind::Dag,
            CheckKind::Empty,
            CheckKind::Count(3),
        ]
    );
    assert_eq!(checks[1].line(), 2);
    assert_eq!(checks[1].directive(), "CHECK-NEXT");
    assert_eq!(checks[2].text(), "c");
}

#[test]
fn any_comment_leader_works() {
    check("; CHECK: add\n# CHECK: mul\nCHECK: ret", IR).unwrap();
}

#[test]
fn plain_checks_match_in_order() {
    check("// CHECK: add\n// CHECK: mul\n// CHECK: ret i32", IR).unwrap();
}

#[test]
fn plain_checks_out_of_order_fail() {
    let m = mismatch("// CHECK: mul\n// CHECK: add", IR);
    assert_eq!(m.line, 2);
    assert_eq!(m.directive, "CHECK");
}

#[test]
fn matches_continue_mid_line() {
    check("CHECK: %1 =\nCHECK: add\nCHECK: %a", IR).unwrap();
    // After matching `%a, 1` the search continues after it on the same line.
    mismatch("CHECK: %a, 1\nCHECK: add", "%1 = add i32 %a, 1\n");
}

#[test]
fn next_on_following_line_passes() {
    check("CHECK: add\nCHECK-NEXT: mul\nCHECK-NEXT: ret", IR).unwrap();
}

#[test]
fn next_on_later_line_fails() {
    let m = mismatch("CHECK: entry:\nCHECK-NEXT: mul", IR);
    assert_eq!(m.line, 2);
    assert!(
        m.message.contains("first found on output line 4"),
        "{}",
        m.message
    );
}

#[test]
fn next_on_same_line_fails() {
    let m = mismatch("CHECK: %1 =\nCHECK-NEXT: add", IR);
    assert!(m.message.contains("same line"), "{}", m.message);
}

#[test]
fn next_not_found_at_all_fails() {
    let m = mismatch("CHECK: add\nCHECK-NEXT: udiv", IR);
    assert!(m.message.contains("not found at all"), "{}", m.message);
}

#[test]
fn same_on_same_line_passes() {
    check("CHECK: define i32\nCHECK-SAME: @f\nCHECK-SAME: i32 %a", IR).unwrap();
}

#[test]
fn same_on_other_line_fails() {
    let m = mismatch("CHECK: define i32\nCHECK-SAME: entry", IR);
    assert!(
        m.message.contains("first found on output line 2"),
        "{}",
        m.message
    );
}

#[test]
fn same_must_follow_previous_match() {
    // `define` is on the line, but before the previous match.
    mismatch("CHECK: @f\nCHECK-SAME: define", IR);
}

#[test]
fn not_between_matches() {
    check("CHECK: add\nCHECK-NOT: call\nCHECK: ret i32", IR).unwrap();
    let m = mismatch("CHECK: define i32\nCHECK-NOT: mul\nCHECK: ret", IR);
    assert_eq!(m.line, 2);
    assert_eq!(m.output_line, 4);
    assert!(m.message.contains("excluded"), "{}", m.message);
}

#[test]
fn leading_and_trailing_not() {
    check("CHECK-NOT: udiv\nCHECK: @f\nCHECK-NOT: sdiv", IR).unwrap();
    // A trailing NOT covers the rest of the output.
    mismatch("CHECK: @f\nCHECK-NOT: call", IR);
    // A leading NOT covers everything before the first match.
    mismatch("CHECK-NOT: add\nCHECK: ret void", IR);
}

#[test]
fn labels_confine_checks_to_their_block() {
    let test = "\
CHECK-LABEL: define i32 @f
CHECK: ret i32
CHECK-LABEL: define void @g
CHECK: ret void";
    check(test, IR).unwrap();
    // `call` exists only in @g, so it must not be found from @f's block.
    let m = mismatch("CHECK-LABEL: @f\nCHECK: call\nCHECK-LABEL: @g", IR);
    assert_eq!(m.line, 2);
}

#[test]
fn label_limits_not() {
    // `call` occurs after the @g label, outside @f's block.
    check("CHECK-LABEL: @f(\nCHECK-NOT: call\nCHECK-LABEL: @g(", IR).unwrap();
}

#[test]
fn label_not_found_fails() {
    let m = mismatch("CHECK-LABEL: @f\nCHECK-LABEL: @h", IR);
    assert_eq!(m.line, 2);
    assert!(m.message.contains("label not found"), "{}", m.message);
}

#[test]
fn labels_must_be_in_order() {
    mismatch("CHECK-LABEL: @g\nCHECK-LABEL: @f(i32", IR);
}

#[test]
fn dag_matches_in_any_order() {
    let test = "CHECK: entry:\nCHECK-DAG: mul\nCHECK-DAG: add\nCHECK: ret i32";
    check(test, IR).unwrap();
}

#[test]
fn dag_matches_do_not_overlap() {
    let output = "x = load\ny = load\n";
    check("CHECK-DAG: load\nCHECK-DAG: load", output).unwrap();
    let m = mismatch("CHECK-DAG: load\nCHECK-DAG: load\nCHECK-DAG: load", output);
    assert_eq!(m.line, 3);
}

#[test]
fn check_after_dag_group_follows_all_matches() {
    // `add` is before `mul`, the later of the DAG matches.
    mismatch("CHECK-DAG: mul\nCHECK-DAG: %1 =\nCHECK: add", IR);
    check("CHECK-DAG: mul\nCHECK-DAG: %1 =\nCHECK: ret", IR).unwrap();
}

#[test]
fn dag_missing_pattern_fails() {
    let m = mismatch("CHECK-DAG: add\nCHECK-DAG: fdiv", IR);
    assert_eq!(m.line, 2);
}

#[test]
fn not_between_dag_groups() {
    let output = "a\nb\nc\nd\n";
    check(
        "CHECK-DAG: b\nCHECK-DAG: a\nCHECK-NOT: x\nCHECK-DAG: d\nCHECK-DAG: c",
        output,
    )
    .unwrap();
    let m = mismatch(
        "CHECK-DAG: a\nCHECK-NOT: b\nCHECK-DAG: d\nCHECK-DAG: c",
        output,
    );
    assert_eq!(m.line, 2);
}

#[test]
fn empty_line_check() {
    check("CHECK: }\nCHECK-EMPTY:\nCHECK-NEXT: define void", IR).unwrap();
    let m = mismatch("CHECK: entry:\nCHECK-EMPTY:", IR);
    assert_eq!(m.output_line, 3);
}

#[test]
fn count_matches_n_times() {
    check("CHECK-COUNT-2: ret\nCHECK-NOT: ret", IR).unwrap();
    check(
        "CHECK-COUNT-3: define{{.*}}\nCHECK-NEXT: call",
        "define a\ndefine b\ndefine c\ncall\n",
    )
    .unwrap();
    let m = mismatch("CHECK-COUNT-3: ret", IR);
    assert!(m.message.contains("found only 2"), "{}", m.message);
}

#[test]
fn count_zero_is_rejected() {
    let (line, message) = parse_error("CHECK: a\nCHECK-COUNT-0: b");
    assert_eq!(line, 2);
    assert!(message.contains("positive"), "{message}");
}

#[test]
fn captured_variable_is_reused() {
    let test = "\
CHECK: %[[SUM:[0-9]+]] = add
CHECK-NEXT: %[[PROD:[0-9]+]] = mul i32 %[[SUM]], 2
CHECK-NEXT: ret i32 %[[PROD]]";
    check(test, IR).unwrap();
}

#[test]
fn captured_variable_must_match_its_value() {
    let test = "CHECK: %[[SUM:[0-9]+]] = add\nCHECK: ret i32 %[[SUM]]";
    let m = mismatch(test, IR);
    assert_eq!(m.line, 2);
}

#[test]
fn captured_value_is_matched_literally() {
    let output = "name a.b\nuse axb\nuse a.b\n";
    check("CHECK: name [[N:[a-z.]+]]\nCHECK-NEXT: use [[N]]", output).unwrap_err();
    check("CHECK: name [[N:[a-z.]+]]\nCHECK: use [[N]]", output).unwrap();
}

#[test]
fn variables_can_be_redefined() {
    let output = "v 1\nu 1\nv 2\nu 2\n";
    check(
        "CHECK: v [[X:[0-9]]]\nCHECK: u [[X]]\nCHECK: v [[X:[0-9]]]\nCHECK: u [[X]]",
        output,
    )
    .unwrap();
}

#[test]
fn variable_from_label_persists() {
    let test = "CHECK-LABEL: define {{.*}} @[[FN:[a-z]+]](\nCHECK-LABEL: define void\nCHECK: call void @[[FN]]()";
    check(test, IR).unwrap();
}

#[test]
fn undefined_variable_is_an_error() {
    let (line, message) = parse_error("CHECK: foo\nCHECK: [[NOPE]]");
    assert_eq!(line, 2);
    assert!(message.contains("NOPE"), "{message}");
}

#[test]
fn label_cannot_use_variables() {
    parse_error("CHECK: @[[F:[a-z]]]\nCHECK-LABEL: [[F]]");
}

#[test]
fn whitespace_is_canonicalized() {
    let output = "a \t  b\nc d\n";
    check("CHECK: a b", output).unwrap();
    check("CHECK: c      d", output).unwrap();
    check("CHECK:    a b    ", output).unwrap();
    // Whitespace in the pattern still requires some whitespace in the output.
    mismatch("CHECK: x y", "xy\n");
}

#[test]
fn literal_text_is_not_a_regex() {
    mismatch("CHECK: a.b", "axb\n");
    check("CHECK: f(a[0]) * 2", "f(a[0]) * 2\n").unwrap();
}

#[test]
fn inline_regex() {
    check("CHECK: %{{[0-9]+}} = mul", IR).unwrap();
    check("CHECK: ret {{i32|void}} %2", IR).unwrap();
    check("CHECK: {{^}}entry:{{$}}", IR).unwrap();
    // `{{^}}` anchors to a real line start, not to the search position.
    mismatch("CHECK: %1\nCHECK-SAME: {{^}}= add", IR);
}

#[test]
fn regex_does_not_cross_lines_unless_asked() {
    let output = "a\nb\n";
    mismatch("CHECK: a{{[^x]*}}b", output);
    check("CHECK: a{{\\n}}b", output).unwrap();
}

#[test]
fn empty_patterns_are_rejected() {
    assert_eq!(parse_error("CHECK: x\nCHECK:   ").0, 2);
    parse_error("CHECK-NOT:");
    parse_error("CHECK: x\nCHECK-EMPTY: y");
}

#[test]
fn relative_check_needs_a_previous_match() {
    parse_error("CHECK-NEXT: x");
    parse_error("CHECK-NOT: y\nCHECK-SAME: x");
}

#[test]
fn malformed_pattern_reports_line() {
    let (line, message) = parse_error("\n\nCHECK: {{(}}");
    assert_eq!(line, 3);
    assert!(message.contains("regex"), "{message}");
}

#[test]
fn prefix_must_not_be_glued_to_a_word() {
    // `MYCHECK:` is not a CHECK directive, so only `add` is checked.
    check("// MYCHECK: nothing\n// CHECK: add", IR).unwrap();
    let options = CheckOptions {
        prefix: "MYCHECK".into(),
    };
    check_with_options("// MYCHECK: nothing", IR, &options).unwrap_err();
    check_with_options("// MYCHECK: add\n// CHECK: nothing", IR, &options).unwrap();
}

#[test]
fn missing_or_invalid_prefix() {
    assert_eq!(
        check("nothing here", IR).unwrap_err(),
        CheckError::NoChecks {
            prefix: "CHECK".into()
        }
    );
    assert!(matches!(
        parse_checks("CHECK: a", "1X"),
        Err(CheckError::InvalidPrefix(_))
    ));
    // Unknown suffixes are not directives.
    assert!(matches!(
        parse_checks("CHECK-FOO: a", "CHECK"),
        Err(CheckError::NoChecks { .. })
    ));
}

#[test]
fn error_message_names_check_and_shows_output() {
    let err = check("// CHECK: add\n// CHECK-NEXT: sub", IR).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("test file line 2"), "{text}");
    assert!(text.contains("CHECK-NEXT: sub"), "{text}");
    assert!(text.contains(">    3 |   %1 = add i32 %a, 1"), "{text}");
    assert!(text.contains("4 |   %2 = mul"), "{text}");
}

#[test]
fn non_ascii_output_is_handled() {
    let output = "λ → µ\nüber\n";
    check("CHECK: → µ\nCHECK-NEXT: {{ü}}ber", output).unwrap();
    check(
        "CHECK-DAG: {{.}}\nCHECK-DAG: {{.}}\nCHECK-DAG: {{.}}",
        output,
    )
    .unwrap();
}

#[test]
fn large_output_is_checked_quickly() {
    // Each line's operand is the previous line's value: exercises variable
    // uses (recompiled per match) on a long output.
    let output: String = (0..20_000usize)
        .map(|i| format!("  %{i} = add i32 %x, {}\n", i.saturating_sub(1)))
        .collect();
    let mut test = String::from("CHECK-LABEL: %[[V0:0]] =\n");
    for i in 1..2_000 {
        let prev = i - 1;
        test.push_str(&format!(
            "CHECK-NEXT: %[[V{i}:[0-9]+]] = add i32 %x, [[V{prev}]]\n"
        ));
    }
    test.push_str("CHECK-NOT: sub\nCHECK: %19999 =\n");
    let started = std::time::Instant::now();
    check(&test, &output).unwrap();
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
}
