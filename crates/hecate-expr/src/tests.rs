//! The language, table by table, over one crossing's data (the reference suite's
//! environment, extended): values and operators, precedence, every missing-data rule,
//! the Bundle lookups, interpolation, conditions, `successIf`, and the errors.

use std::collections::BTreeMap;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;

fn image(repo: &str, tag: &str, digest: &str) -> Image {
    Image {
        repo: repo.into(),
        tag: tag.into(),
        digest: digest.into(),
    }
}

fn bundle() -> BundleView {
    BundleView {
        name: "podinfo-9f8c1a2b".into(),
        digest: "9f8c1a2b3c4d".into(),
        alias: "wandering-owl".into(),
        images: vec![
            image("ghcr.io/acme/api", "1.2.3", "sha256:aaa"),
            image("ghcr.io/acme/web", "4.5.6", "sha256:bbb"),
            // A second image of the same repository: the first one wins.
            image("ghcr.io/acme/api", "0.0.1", "sha256:old"),
        ],
        charts: vec![Chart {
            repo: "oci://acme/charts".into(),
            name: String::new(),
            version: "6.3.5".into(),
        }],
        commits: vec![Commit {
            repo: "https://git/acme/app".into(),
            sha: "deadbeef".into(),
            branch: "main".into(),
            tag: "v1".into(),
            message: "fix: the thing".into(),
        }],
    }
}

fn env() -> Env {
    Env {
        steps: BTreeMap::from([
            (
                "commit".to_string(),
                json!({"sha": "9f8c1a2b", "count": 3, "ratio": 0.5, "list": [1, 2, 3],
                       "nested": {"ok": true}, "nothing": null}),
            ),
            // A step that failed still has its output.
            ("smoke".to_string(), json!({"status": 503})),
        ]),
        vars: BTreeMap::from([("region".to_string(), "eu-west-1".to_string())]),
        gate: "production".into(),
        passage: "production-9f8c1a2b-1".into(),
        actor: "olaf".into(),
        namespace: "acme".into(),
        failed: false,
        bundle: bundle(),
        target: Some(TargetView {
            name: "eu-2".into(),
            cluster: "eu-2".into(),
            vars: BTreeMap::from([("replicas".to_string(), "3".to_string())]),
        }),
    }
}

fn value(expr: &str) -> Result<Value, String> {
    evaluate(expr, &env()).map_err(|e| e.to_string())
}

#[test]
fn values() {
    let cases: Vec<(&str, Value)> = vec![
        // Literals.
        ("'single'", json!("single")),
        (r#""double""#, json!("double")),
        ("42", json!(42)),
        ("1.5", json!(1.5)),
        ("true", json!(true)),
        ("false", json!(false)),
        ("nil", json!(null)),
        ("[1, 'a', nil,]", json!([1, "a", null])),
        ("[]", json!([])),
        // The crossing.
        ("gate", json!("production")),
        ("passage", json!("production-9f8c1a2b-1")),
        ("actor", json!("olaf")),
        ("namespace", json!("acme")),
        ("failed", json!(false)),
        ("always", json!(true)),
        // The target a fanned-out crossing reaches.
        ("target.name", json!("eu-2")),
        ("target.cluster", json!("eu-2")),
        ("target.vars.replicas", json!("3")),
        ("target.vars.absent", json!(null)),
        // An unknown top-level name is null.
        ("nonexistent", json!(null)),
        // vars: a missing name is the empty string.
        ("vars.region", json!("eu-west-1")),
        ("vars['region']", json!("eu-west-1")),
        ("vars.absent", json!("")),
        ("vars", json!({"region": "eu-west-1"})),
        // steps: a missing alias or key is null; integers stay integers.
        ("steps.commit.sha", json!("9f8c1a2b")),
        ("steps.commit.count", json!(3)),
        ("steps.commit.absent", json!(null)),
        ("steps.commit.nothing", json!(null)),
        ("steps.absent", json!(null)),
        ("steps.smoke.status", json!(503)),
        (r#"steps["commit"]["sha"]"#, json!("9f8c1a2b")),
        ("steps.commit.list[0]", json!(1)),
        ("steps.commit.list[-1]", json!(3)),
        ("steps.commit.list[1.9]", json!(2)),
        ("steps.commit.nested.ok", json!(true)),
        ("steps.commit['nested']", json!({"ok": true})),
        // The Bundle.
        ("bundle.name", json!("podinfo-9f8c1a2b")),
        ("bundle.digest", json!("9f8c1a2b3c4d")),
        ("bundle.alias", json!("wandering-owl")),
        ("bundle.absent", json!(null)),
        ("bundle.image('ghcr.io/acme/api').tag", json!("1.2.3")),
        (
            "bundle.image('ghcr.io/acme/api').digest",
            json!("sha256:aaa"),
        ),
        ("bundle.image('ghcr.io/acme/web').tag", json!("4.5.6")),
        (
            "bundle.image('ghcr.io/acme/api')",
            json!({"repo": "ghcr.io/acme/api", "tag": "1.2.3", "digest": "sha256:aaa"}),
        ),
        (
            "bundle.chart('oci://acme/charts')",
            json!({"repo": "oci://acme/charts", "name": "", "version": "6.3.5"}),
        ),
        (
            "bundle.commit('https://git/acme/app')",
            json!({"repo": "https://git/acme/app", "sha": "deadbeef", "branch": "main",
                   "tag": "v1", "message": "fix: the thing"}),
        ),
        ("bundle['digest']", json!("9f8c1a2b3c4d")),
        // Absent artifacts are null; the repository must match exactly, and the kind.
        ("bundle.image('ghcr.io/acme/absent')", json!(null)),
        ("bundle.image('ghcr.io/acme/ap')", json!(null)),
        ("bundle.chart('ghcr.io/acme/api')", json!(null)),
        ("bundle.commit('oci://acme/charts')", json!(null)),
        // `?.` reads through null on purpose; `??` supplies a default.
        ("bundle.image('ghcr.io/acme/absent')?.tag", json!(null)),
        (
            "bundle.image('ghcr.io/acme/absent')?.tag.more[0]",
            json!(null),
        ),
        (
            "bundle.image('ghcr.io/acme/absent')?.tag ?? 'latest'",
            json!("latest"),
        ),
        ("steps.absent?.sha", json!(null)),
        ("steps.absent?.['sha']", json!(null)),
        ("steps.commit?.sha", json!("9f8c1a2b")),
        ("steps.absent ?? 'x'", json!("x")),
        ("vars.absent ?? 'x'", json!("")),
        ("1 ?? 2", json!(1)),
        ("nil ?? nil ?? 3", json!(3)),
        // Arithmetic.
        ("1 + 2", json!(3)),
        ("5 - 7", json!(-2)),
        ("4 * 2.5", json!(10.0)),
        ("7 / 2", json!(3.5)),
        ("6 / 2", json!(3.0)),
        ("7 % 3", json!(1)),
        ("-steps.commit.count", json!(-3)),
        ("+2", json!(2)),
        ("'v' + vars.region", json!("veu-west-1")),
        ("steps.commit.count + steps.commit.ratio", json!(3.5)),
        // Comparison.
        ("steps.commit.count == 3", json!(true)),
        ("steps.commit.count == 3.0", json!(true)),
        ("steps.commit.count != 3", json!(false)),
        ("'3' == 3", json!(false)),
        ("steps.absent == nil", json!(true)),
        ("bundle.image('ghcr.io/acme/api') != nil", json!(true)),
        ("steps.commit.list == [1, 2, 3]", json!(true)),
        ("steps.commit.count < 4", json!(true)),
        ("steps.commit.count <= 3", json!(true)),
        ("steps.commit.count > 3", json!(false)),
        ("steps.commit.count >= 3.5", json!(false)),
        ("'a' < 'b'", json!(true)),
        // Logic, both spellings.
        ("true && false", json!(false)),
        ("true and true", json!(true)),
        ("false || true", json!(true)),
        ("false or false", json!(false)),
        ("!failed", json!(true)),
        ("not always", json!(false)),
        // Short-circuit: the right side is not evaluated when the left decides.
        ("failed && steps.absent.sha", json!(false)),
        ("always || steps.absent.sha", json!(true)),
        // String operators and their `not` forms.
        ("vars.region startsWith 'eu'", json!(true)),
        ("vars.region endsWith '-1'", json!(true)),
        ("vars.region contains 'west'", json!(true)),
        ("vars.region matches '^eu-[a-z]+-\\\\d$'", json!(true)),
        (
            r"bundle.image('ghcr.io/acme/api').tag matches `^\d+\.\d+`",
            json!(true),
        ),
        ("vars.region not startsWith 'us'", json!(true)),
        ("vars.region not contains 'west'", json!(false)),
        ("vars.region not matches 'x'", json!(true)),
        // Membership.
        ("gate in ['staging', 'production']", json!(true)),
        ("gate not in ['staging', 'production']", json!(false)),
        ("2 in steps.commit.list", json!(true)),
        ("2.0 in steps.commit.list", json!(true)),
        ("'commit' in steps", json!(true)),
        ("'absent' not in steps", json!(true)),
        ("'region' in vars", json!(true)),
        ("'ok' in steps.commit.nested", json!(true)),
        ("'x' in steps.absent", json!(false)),
        // Ternary.
        ("failed ? 'report' : 'skip'", json!("skip")),
        ("always ? 1 : 2", json!(1)),
        ("false ? 1 : true ? 2 : 3", json!(2)),
        ("(failed ? 'a' : 'b') + 'c'", json!("bc")),
    ];
    for (expr, want) in cases {
        assert_eq!(value(expr), Ok(want), "{expr}");
    }
}

/// Precedence and associativity follow the reference language.
#[test]
fn precedence() {
    let cases: Vec<(&str, Value)> = vec![
        ("1 + 2 * 3", json!(7)),
        ("(1 + 2) * 3", json!(9)),
        ("10 - 2 - 3", json!(5)),
        ("2 * 3 % 4", json!(2)),
        ("12 / 2 / 3", json!(2.0)),
        ("-2 * 3", json!(-6)),
        ("true || false && false", json!(true)),
        ("(true || false) && false", json!(false)),
        ("not false and false", json!(false)),
        ("1 < 2 == true", json!(true)),
        ("1 + 1 == 2 && 'a' + 'b' == 'ab'", json!(true)),
        (
            "failed || gate == 'production' ? 'go' : 'stop'",
            json!("go"),
        ),
        // `??` binds tighter than arithmetic and unary minus.
        ("steps.absent ?? 1 + 1", json!(2)),
        ("-steps.absent ?? 2", json!(-2)),
        ("2 * steps.absent ?? 3", json!(6)),
        // Word operators sit with the comparisons.
        ("'a' + 'b' in ['ab']", json!(true)),
        ("vars.region startsWith 'eu' == true", json!(true)),
        ("steps.commit.list[0] + steps.commit.list[-1]", json!(4)),
        (
            "bundle.image('ghcr.io/acme/api').tag + '-' + gate",
            json!("1.2.3-production"),
        ),
    ];
    for (expr, want) in cases {
        assert_eq!(value(expr), Ok(want), "{expr}");
    }
}

#[test]
fn errors() {
    let cases = [
        // Reading through null is loud (spec §4.2).
        (
            "steps.absent.sha",
            r#""steps.absent.sha" could not be evaluated: cannot read .sha of null (steps.absent is null)"#,
        ),
        (
            "nonexistent.thing",
            r#""nonexistent.thing" could not be evaluated: cannot read .thing of null (nonexistent is null)"#,
        ),
        (
            "bundle.image('x').tag",
            r#""bundle.image('x').tag" could not be evaluated: cannot read .tag of null (bundle.image('x') is null)"#,
        ),
        (
            "steps.commit.nothing[0]",
            r#""steps.commit.nothing[0]" could not be evaluated: cannot read [0] of null (steps.commit.nothing is null)"#,
        ),
        (
            "gate.x",
            r#""gate.x" could not be evaluated: cannot read .x of a string (gate)"#,
        ),
        (
            "steps.commit.sha[0]",
            r#""steps.commit.sha[0]" could not be evaluated: cannot read [0] of a string (steps.commit.sha)"#,
        ),
        (
            "steps.commit.list.x",
            r#""steps.commit.list.x" could not be evaluated: cannot read .x of a list (steps.commit.list)"#,
        ),
        (
            "steps.commit.list[3]",
            r#""steps.commit.list[3]" could not be evaluated: index 3 is out of range: steps.commit.list has 3 items"#,
        ),
        (
            "steps.commit.list[-4]",
            r#""steps.commit.list[-4]" could not be evaluated: index -4 is out of range: steps.commit.list has 3 items"#,
        ),
        (
            "steps.commit.list['a']",
            r#""steps.commit.list['a']" could not be evaluated: a list's index is a number, not a string (steps.commit.list["a"])"#,
        ),
        (
            "steps.commit[0]",
            r#""steps.commit[0]" could not be evaluated: a map's key is a string, not an integer (steps.commit[0])"#,
        ),
        (
            "vars[1]",
            r#""vars[1]" could not be evaluated: vars is indexed by name, and an integer is not a name"#,
        ),
        // Functions.
        (
            "foo('x')",
            r#"invalid expression "foo('x')" at column 1: unknown function "foo""#,
        ),
        (
            "gate == upper(gate)",
            r#"invalid expression "gate == upper(gate)" at column 9: unknown function "upper""#,
        ),
        (
            "bundle.foo('x')",
            r#""bundle.foo('x')" could not be evaluated: bundle.foo is not a function"#,
        ),
        (
            "steps.commit.sha()",
            r#""steps.commit.sha()" could not be evaluated: steps.commit.sha is not a function"#,
        ),
        (
            "bundle.image()",
            r#""bundle.image()" could not be evaluated: bundle.image takes one argument, the repository; it was given 0"#,
        ),
        (
            "bundle.image('a', 'b')",
            r#""bundle.image('a', 'b')" could not be evaluated: bundle.image takes one argument, the repository; it was given 2"#,
        ),
        (
            "bundle.chart(1)",
            r#""bundle.chart(1)" could not be evaluated: bundle.chart takes the repository as a string, not an integer"#,
        ),
        (
            "bundle.image.tag",
            r#""bundle.image.tag" could not be evaluated: bundle.image is a function; it has no .tag"#,
        ),
        (
            "bundle.image == nil",
            r#""bundle.image == nil" could not be evaluated: bundle.image is a function; call it with a repository: bundle.image('<repo>')"#,
        ),
        (
            "bundle",
            r#""bundle" could not be evaluated: bundle is not a value by itself; read bundle.name, bundle.digest or bundle.alias, or look an artifact up with bundle.image('<repo>'), bundle.chart('<repo>') or bundle.commit('<repo>')"#,
        ),
        // Operators on the wrong kinds.
        (
            "'a' + 1",
            r#""'a' + 1" could not be evaluated: + is not defined on a string and an integer ('a' + 1)"#,
        ),
        (
            "steps.commit.count / 0",
            r#""steps.commit.count / 0" could not be evaluated: division by zero (steps.commit.count / 0)"#,
        ),
        (
            "steps.commit.count % 0",
            r#""steps.commit.count % 0" could not be evaluated: modulo by zero (steps.commit.count % 0)"#,
        ),
        (
            "gate < 1",
            r#""gate < 1" could not be evaluated: < cannot compare a string with an integer (gate < 1)"#,
        ),
        (
            "vars.region startsWith 1",
            r#""vars.region startsWith 1" could not be evaluated: startsWith needs two strings, not a string and an integer (vars.region startsWith 1)"#,
        ),
        (
            "gate in 'production'",
            r#""gate in 'production'" could not be evaluated: in needs a list or a map on its right, not a string (gate in 'production')"#,
        ),
        (
            "1 && true",
            r#""1 && true" could not be evaluated: && needs true or false, and 1 is an integer"#,
        ),
        (
            "always and 'yes'",
            r#""always and 'yes'" could not be evaluated: && needs true or false, and 'yes' is a string"#,
        ),
        (
            "-gate",
            r#""-gate" could not be evaluated: - is not defined on a string (gate)"#,
        ),
        (
            "steps.commit.count ? 1 : 2",
            r#""steps.commit.count ? 1 : 2" could not be evaluated: the test of ?: needs true or false, and steps.commit.count is an integer"#,
        ),
        // Unary `!` binds tighter than comparisons, as in the reference.
        (
            "!steps.commit.count == 3",
            r#""!steps.commit.count == 3" could not be evaluated: ! is not defined on an integer (steps.commit.count)"#,
        ),
        (
            "not 'a' in ['a']",
            r#""not 'a' in ['a']" could not be evaluated: ! is not defined on a string ('a')"#,
        ),
        // Syntax, with the column.
        (
            "steps.",
            r#"invalid expression "steps." at column 6: expected a name after ".""#,
        ),
        (
            "(1 + 2",
            r#"invalid expression "(1 + 2" at column 1: this bracket is never closed with ")""#,
        ),
        (
            "steps.commit.list[0",
            r#"invalid expression "steps.commit.list[0" at column 18: this bracket is never closed with "]""#,
        ),
        (
            "[1 2]",
            r#"invalid expression "[1 2]" at column 4: expected "," or "]", found "2""#,
        ),
        (
            "gate ==",
            r#"invalid expression "gate ==" at column 6: "==" needs something on its right"#,
        ),
        (
            "gate production",
            r#"invalid expression "gate production" at column 6: unexpected "production" after a complete expression"#,
        ),
        (
            "gate = 'x'",
            r#"invalid expression "gate = 'x'" at column 6: unexpected character '='; to compare, write =="#,
        ),
        (
            "'é' + ",
            r#"invalid expression "'é' +" at column 5: "+" needs something on its right"#,
        ),
        (
            "failed ? 1",
            r#"invalid expression "failed ? 1" at column 11: expected ":" to go with "?", found the end of the expression"#,
        ),
        (
            "gate not 'x'",
            r#"invalid expression "gate not 'x'" at column 6: unexpected "not""#,
        ),
        (
            "and",
            r#"invalid expression "and" at column 1: unexpected "and""#,
        ),
        (
            "'open",
            r#"invalid expression "'open" at column 1: this string is never closed"#,
        ),
        (
            "",
            r#"invalid expression "" at column 1: the expression is empty"#,
        ),
        (
            "gate matches '('",
            "invalid expression \"gate matches '('\" at column 14: invalid regular expression: unclosed group",
        ),
    ];
    for (expr, want) in cases {
        assert_eq!(value(expr), Err(want.to_string()), "{expr}");
    }
}

#[test]
fn an_empty_env_is_usable() {
    let empty = Env::default();
    let got = |expr: &str| evaluate(expr, &empty).map_err(|e| e.to_string());
    assert_eq!(got("gate"), Ok(json!("")));
    assert_eq!(got("bundle.name"), Ok(json!("")));
    assert_eq!(got("bundle.image('x')"), Ok(json!(null)));
    assert_eq!(got("vars.x"), Ok(json!("")));
    assert!(got("steps.absent.sha").is_err());
}

#[test]
fn conditions() {
    let cases: Vec<(&str, Result<bool, &str>)> = vec![
        ("always", Ok(true)),
        ("failed", Ok(false)),
        ("  !failed  ", Ok(true)),
        (r#"gate == "production""#, Ok(true)),
        (r#"gate == "staging""#, Ok(false)),
        (r#"vars.region startsWith "eu""#, Ok(true)),
        ("steps.commit.count > 2", Ok(true)),
        ("bundle.image('ghcr.io/acme/api') != nil", Ok(true)),
        ("bundle.image('ghcr.io/acme/absent') == nil", Ok(true)),
        ("steps.smoke.status >= 500 && !failed", Ok(true)),
        // Q10: one `${{ … }}` around the whole condition is the same condition.
        ("${{ always }}", Ok(true)),
        ("  ${{ gate == 'production' }}  ", Ok(true)),
        ("${{failed}}", Ok(false)),
        (
            "${{ always }} && ${{ failed }}",
            Err(
                r#"invalid expression "${{ always }} && ${{ failed }}" at column 2: unexpected character '{'"#,
            ),
        ),
        // Truthiness is never guessed.
        (
            r#""yes""#,
            Err(r#"condition "\"yes\"" gave the string "yes", not true or false"#),
        ),
        (
            "1",
            Err(r#"condition "1" gave the number 1, not true or false"#),
        ),
        (
            "6 / 4",
            Err(r#"condition "6 / 4" gave the number 1.5, not true or false"#),
        ),
        (
            "bundle.digest",
            Err(r#"condition "bundle.digest" gave the string "9f8c1a2b3c4d", not true or false"#),
        ),
        (
            "steps.absent",
            Err(r#"condition "steps.absent" gave null, not true or false"#),
        ),
        (
            "vars.absent",
            Err(r#"condition "vars.absent" gave the string "", not true or false"#),
        ),
        (
            "steps.commit.list",
            Err(r#"condition "steps.commit.list" gave a list, not true or false"#),
        ),
        (
            "'a long string that goes on and on and on past forty'",
            Err(
                r#"condition "'a long string that goes on and on and on past forty'" gave the string "a long string that goes on and on and on"…, not true or false"#,
            ),
        ),
        (
            "steps.absent.ok",
            Err(
                r#""steps.absent.ok" could not be evaluated: cannot read .ok of null (steps.absent is null)"#,
            ),
        ),
    ];
    for (source, want) in cases {
        let got = condition(source, &env()).map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(str::to_string), "{source}");
    }
    let mut after_failure = env();
    after_failure.failed = true;
    assert_eq!(condition("failed", &after_failure), Ok(true));
}

#[test]
fn compile_checks_syntax_only() {
    let cases: Vec<(&str, Result<(), &str>)> = vec![
        ("always", Ok(())),
        ("failed || steps.x.ok", Ok(())),
        // Data is not judged: these fail or not at run time.
        ("nonexistent.thing", Ok(())),
        ("bundle.image('x').tag == '1'", Ok(())),
        ("'a' + 1", Ok(())),
        ("vars.x matches vars.pattern", Ok(())),
        ("${{ always }}", Ok(())),
        (
            "steps.",
            Err(r#"invalid expression "steps." at column 6: expected a name after ".""#),
        ),
        (
            "foo()",
            Err(r#"invalid expression "foo()" at column 1: unknown function "foo""#),
        ),
        (
            "gate matches '['",
            Err(
                r#"invalid expression "gate matches '['" at column 14: invalid regular expression: unclosed character class"#,
            ),
        ),
        (
            "${{ }}",
            Err(r#"invalid expression "" at column 1: the expression is empty"#),
        ),
    ];
    for (source, want) in cases {
        let got = compile(source).map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(str::to_string), "{source}");
    }
}

#[test]
fn interpolation() {
    let cases: Vec<(Value, Value)> = vec![
        // Typed when the whole string is one expression.
        (json!("${{ steps.commit.sha }}"), json!("9f8c1a2b")),
        (json!("${{ steps.commit.count }}"), json!(3)),
        (json!("${{steps.commit.count}}"), json!(3)),
        (json!("${{ steps.commit.ratio }}"), json!(0.5)),
        (json!("${{ 6 / 2 }}"), json!(3)),
        (json!("${{ 7 / 2 }}"), json!(3.5)),
        (json!("${{ failed }}"), json!(false)),
        (json!("${{ steps.absent }}"), json!(null)),
        (json!("${{ steps.commit.nested }}"), json!({"ok": true})),
        (json!("${{ [1, 'a'] }}"), json!([1, "a"])),
        (json!("${{ vars.region }}"), json!("eu-west-1")),
        (json!("${{ gate }}"), json!("production")),
        (json!("${{ actor }}"), json!("olaf")),
        (json!("${{ bundle.digest }}"), json!("9f8c1a2b3c4d")),
        (json!("${{ bundle.alias }}"), json!("wandering-owl")),
        (
            json!("${{ bundle.image('ghcr.io/acme/api').tag }}"),
            json!("1.2.3"),
        ),
        (
            json!("${{ bundle.chart('oci://acme/charts').version }}"),
            json!("6.3.5"),
        ),
        (
            json!("${{ bundle.commit('https://git/acme/app').sha }}"),
            json!("deadbeef"),
        ),
        // Stringified inside text.
        (
            json!("count is ${{ steps.commit.count }}"),
            json!("count is 3"),
        ),
        (
            json!("prod: ${{ steps.commit.sha }}"),
            json!("prod: 9f8c1a2b"),
        ),
        (
            json!("${{ gate }}/${{ vars.region }}"),
            json!("production/eu-west-1"),
        ),
        (
            json!("${{ gate }}${{ gate }}"),
            json!("productionproduction"),
        ),
        (
            json!("promote ${{ bundle.image('ghcr.io/acme/api').tag }} to ${{ gate }}"),
            json!("promote 1.2.3 to production"),
        ),
        (
            json!("half: ${{ 7 / 2 }}, whole: ${{ 6 / 2 }}"),
            json!("half: 3.5, whole: 3"),
        ),
        (json!("[${{ steps.absent }}]"), json!("[]")),
        (json!("failed=${{ failed }}"), json!("failed=false")),
        (json!("l=${{ [1, 'a'] }}"), json!(r#"l=[1,"a"]"#)),
        (
            json!("image=${{ bundle.image('ghcr.io/acme/api') }}"),
            json!(r#"image={"digest":"sha256:aaa","repo":"ghcr.io/acme/api","tag":"1.2.3"}"#),
        ),
        // Non-greedy: the first `}}` closes the expression.
        (json!("${{ 'a' }}}}"), json!("a}}")),
        (json!("${{ 'a' }} and }}"), json!("a and }}")),
        // Not an expression: left alone.
        (json!("no expressions here"), json!("no expressions here")),
        (json!(""), json!("")),
        (json!("${{ gate\n}}"), json!("${{ gate\n}}")),
        (json!("$gate {{ gate }}"), json!("$gate {{ gate }}")),
        (json!(42), json!(42)),
        (json!(true), json!(true)),
        (json!(null), json!(null)),
        // Keys are interpolated, and always text.
        (json!({"${{ gate }}": "x"}), json!({"production": "x"})),
        (json!({"n${{ steps.commit.count }}": 1}), json!({"n3": 1})),
        (json!({"${{ steps.commit.count }}": 1}), json!({"3": 1})),
        (json!({"${{ steps.absent }}": 1}), json!({"": 1})),
        (
            json!({"${{ steps.commit.nested }}": 1}),
            json!({r#"{"ok":true}"#: 1}),
        ),
        // Nested structures, at any depth.
        (
            json!({
                "path": "envs/${{ gate }}",
                "image": "${{ bundle.image('ghcr.io/acme/api').repo }}:${{ bundle.image('ghcr.io/acme/api').tag }}",
                "replicas": "${{ steps.commit.count }}",
                "nested": {"sha": "${{ steps.commit.sha }}", "deeper": [{"${{ namespace }}": ["${{ failed }}"]}]},
                "list": ["${{ gate }}", "static"],
                "untouched": 42,
                "flag": true
            }),
            json!({
                "path": "envs/production",
                "image": "ghcr.io/acme/api:1.2.3",
                "replicas": 3,
                "nested": {"sha": "9f8c1a2b", "deeper": [{"acme": [false]}]},
                "list": ["production", "static"],
                "untouched": 42,
                "flag": true
            }),
        ),
    ];
    for (with, want) in cases {
        let got = interpolate(&with, &env()).map_err(|e| e.to_string());
        assert_eq!(got, Ok(want), "{with}");
    }
}

#[test]
fn interpolation_keeps_integers_integers() {
    let got = interpolate(&json!({"replicas": "${{ steps.commit.count }}"}), &env())
        .expect("interpolates");
    assert_eq!(got.to_string(), r#"{"replicas":3}"#);
    assert!(got["replicas"].is_i64());
}

#[test]
fn interpolation_errors_say_where() {
    let cases = [
        (
            json!("${{ bundle.image('ghcr.io/acme/absent').tag }}"),
            r#"with: "bundle.image('ghcr.io/acme/absent').tag" could not be evaluated: cannot read .tag of null (bundle.image('ghcr.io/acme/absent') is null)"#,
        ),
        (
            json!({"a": {"b": ["x", "sha ${{ steps.absent.sha }}"]}}),
            r#"with.a.b[1]: "steps.absent.sha" could not be evaluated: cannot read .sha of null (steps.absent is null)"#,
        ),
        (
            json!({"a": {"${{ foo() }}": 1}}),
            r#"with.a, in the key "${{ foo() }}": invalid expression "foo()" at column 1: unknown function "foo""#,
        ),
        (
            json!({"x": "${{ steps. }}"}),
            r#"with.x: invalid expression "steps." at column 6: expected a name after ".""#,
        ),
        (
            json!({"x": "${{ nonexistent.thing }}"}),
            r#"with.x: "nonexistent.thing" could not be evaluated: cannot read .thing of null (nonexistent is null)"#,
        ),
        // The first `}}` closes the expression, even inside quotes.
        (
            json!({"x": "${{ '}}' }}"}),
            r#"with.x: invalid expression "'" at column 1: this string is never closed"#,
        ),
        (
            json!({"x": "a ${{ }} b"}),
            r#"with.x: invalid expression "" at column 1: the expression is empty"#,
        ),
        (
            json!({"x": "${{ bundle }}"}),
            r#"with.x: "bundle" could not be evaluated: bundle is not a value by itself; read bundle.name, bundle.digest or bundle.alias, or look an artifact up with bundle.image('<repo>'), bundle.chart('<repo>') or bundle.commit('<repo>')"#,
        ),
    ];
    for (with, want) in cases {
        let got = interpolate(&with, &env()).map_err(|e| e.to_string());
        assert_eq!(got, Err(want.to_string()), "{with}");
    }
}

/// A `successIf`, the response it judges (status, body, JSON) and the verdict.
type ResponseCase<'a> = (
    &'a str,
    u16,
    &'a str,
    Option<&'a Value>,
    Result<bool, &'a str>,
);

#[test]
fn success_conditions() {
    let healthy = json!({"status": "healthy", "items": [{"ready": true}]});
    let cases: Vec<ResponseCase> = vec![
        ("status == 200", 200, "", None, Ok(true)),
        ("status == 200", 503, "", None, Ok(false)),
        ("status >= 200 && status < 300", 204, "", None, Ok(true)),
        ("body contains 'ok'", 200, "all ok", None, Ok(true)),
        ("body == ''", 200, "", None, Ok(true)),
        (
            "json.status == 'healthy'",
            200,
            "{}",
            Some(&healthy),
            Ok(true),
        ),
        ("json.items[0].ready", 200, "{}", Some(&healthy), Ok(true)),
        ("json.absent == nil", 200, "{}", Some(&healthy), Ok(true)),
        ("json == nil", 200, "not json", None, Ok(true)),
        (
            "json?.status == 'healthy'",
            200,
            "not json",
            None,
            Ok(false),
        ),
        ("  status in [200, 201]  ", 201, "", None, Ok(true)),
        (
            "json.status == 'healthy'",
            200,
            "not json",
            None,
            Err(
                r#""json.status == 'healthy'" could not be evaluated: cannot read .status of null (json is null)"#,
            ),
        ),
        (
            "status",
            200,
            "",
            None,
            Err(r#"condition "status" gave the number 200, not true or false"#),
        ),
        (
            "body",
            200,
            "ok",
            None,
            Err(r#"condition "body" gave the string "ok", not true or false"#),
        ),
        // Only status, body and json exist here.
        (
            "gate == 'production'",
            200,
            "",
            None,
            Err(
                r#"invalid expression "gate == 'production'" at column 1: unknown name "gate"; the names here are status, body, json"#,
            ),
        ),
        (
            "status == 200 && always",
            200,
            "",
            None,
            Err(
                r#"invalid expression "status == 200 && always" at column 18: unknown name "always"; the names here are status, body, json"#,
            ),
        ),
        (
            "status ==",
            200,
            "",
            None,
            Err(r#"invalid expression "status ==" at column 8: "==" needs something on its right"#),
        ),
    ];
    for (source, status, body, json, want) in cases {
        let got = success_if(source, status, body, json).map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(str::to_string), "{source}");
    }
}

#[test]
fn success_conditions_compile() {
    let cases: Vec<(&str, Result<(), &str>)> = vec![
        ("status == 200", Ok(())),
        ("json?.ok ?? false", Ok(())),
        ("body matches '^OK'", Ok(())),
        (
            "steps.x.ok",
            Err(
                r#"invalid expression "steps.x.ok" at column 1: unknown name "steps"; the names here are status, body, json"#,
            ),
        ),
        (
            "json.x(",
            Err(
                r#"invalid expression "json.x(" at column 7: this bracket is never closed with ")""#,
            ),
        ),
    ];
    for (source, want) in cases {
        let got = compile_success_if(source).map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(str::to_string), "{source}");
    }
}

#[test]
fn errors_are_typed() {
    assert_eq!(
        compile("a +"),
        Err(ExprError::Invalid {
            expr: "a +".into(),
            column: 3,
            problem: r#""+" needs something on its right"#.into(),
        })
    );
    assert_eq!(
        condition("1", &env()),
        Err(ExprError::NotBoolean {
            expr: "1".into(),
            got: "the number 1".into(),
        })
    );
    let Err(ExprError::At { path, error }) = interpolate(&json!({"a": "${{ x.y }}"}), &env())
    else {
        panic!("expected an error with its place");
    };
    assert_eq!(path, "with.a");
    assert!(matches!(*error, ExprError::Failed { .. }), "{error:?}");
}

// ----- bounds: no expression a Gate author writes can exhaust the stack -------------

/// `open` `n` times, then `middle`, then `close` `n` times.
fn nested(open: &str, middle: &str, close: &str, n: usize) -> String {
    format!("{}{middle}{}", open.repeat(n), close.repeat(n))
}

/// The problem `compile` reports for `source`, which must be an `Invalid`.
fn invalid(source: &str) -> String {
    match compile(source) {
        Err(ExprError::Invalid { problem, .. }) => problem,
        other => panic!(
            "{} bytes: expected an invalid expression, got {other:?}",
            source.len()
        ),
    }
}

#[test]
fn nesting_beyond_the_limit_is_an_expression_error() {
    let too_deep = format!("the expression nests more than {MAX_DEPTH} deep");
    // Each bracket, prefix operator, infix operator and member access is one level:
    // the whole expression is the first.
    let at_limit = [
        nested("(", "true", ")", MAX_DEPTH - 1),
        format!("{}true", "!".repeat(MAX_DEPTH - 1)),
        format!("{}1 == -1", "-".repeat(MAX_DEPTH - 2)),
        format!("{}1 > 0", "1 + ".repeat(MAX_DEPTH - 2)),
        nested("[", "true", "]", MAX_DEPTH - 1),
        format!("steps{}", ".a".repeat(MAX_DEPTH - 1)),
    ];
    for source in &at_limit {
        assert_eq!(compile(source), Ok(()), "{source}");
    }
    let beyond = [
        nested("(", "true", ")", MAX_DEPTH),
        format!("{}true", "!".repeat(MAX_DEPTH)),
        format!("{}true", "not ".repeat(MAX_DEPTH)),
        format!("{}1", "-".repeat(MAX_DEPTH)),
        format!("{}1", "+".repeat(MAX_DEPTH)),
        nested("[", "1", "]", MAX_DEPTH),
        // Chains the parser builds in a loop are as deep as nesting.
        format!("1{}", " + 1".repeat(MAX_DEPTH)),
        format!("steps{}", ".a".repeat(MAX_DEPTH)),
        format!("steps.x{}", "[0]".repeat(MAX_DEPTH)),
        format!("steps.x{}", "?.a".repeat(MAX_DEPTH)),
        format!("{}false", "true ? 1 : ".repeat(MAX_DEPTH)),
        nested("bundle.image(", "'a'", ")", MAX_DEPTH),
    ];
    for source in &beyond {
        let problem = invalid(source);
        assert_eq!(problem, too_deep, "{source}");
    }
}

#[test]
fn what_crashed_the_controller_is_refused_in_words() {
    // Issue 30: each of these overflowed the stack.
    let too_long = format!("at most {MAX_LENGTH} characters");
    let cases = [
        nested("(", "1", ")", 50_000),
        "!".repeat(100_000),
        format!("{}1", "-".repeat(100_000)),
        format!("{}true", "not ".repeat(30_000)),
    ];
    for source in &cases {
        let error = compile(source).expect_err("refused");
        let shown = error.to_string();
        assert!(shown.contains(&too_long), "{shown}");
        // The message quotes the start, never the whole of it.
        assert!(shown.len() < 200, "{} bytes: {shown}", shown.len());
        assert!(matches!(error, ExprError::TooLong { .. }), "{error:?}");
        let error = condition(source, &env()).expect_err("refused");
        assert!(matches!(error, ExprError::TooLong { .. }), "{error:?}");
        let error = success_if(source, 200, "", None).expect_err("refused");
        assert!(matches!(error, ExprError::TooLong { .. }), "{error:?}");
        let error = compile_success_if(source).expect_err("refused");
        assert!(matches!(error, ExprError::TooLong { .. }), "{error:?}");
    }
    // Inside the length limit, the depth limit answers.
    let deep = nested("(", "1", ")", 2_000);
    assert!(deep.len() <= MAX_LENGTH);
    let error = condition(&deep, &env()).expect_err("refused");
    assert!(error.to_string().contains("nests more than"), "{error}");
    let error = success_if(&deep, 200, "", None).expect_err("refused");
    assert!(error.to_string().contains("nests more than"), "{error}");
}

#[test]
fn long_expressions_are_refused_and_long_text_is_not() {
    let fits = format!("'{}' != ''", "a".repeat(MAX_LENGTH - 8));
    assert_eq!(fits.len(), MAX_LENGTH);
    assert_eq!(condition(&fits, &env()), Ok(true));
    let over = format!("'{}' != ''", "a".repeat(MAX_LENGTH - 7));
    let error = condition(&over, &env()).expect_err("too long");
    assert_eq!(
        error,
        ExprError::TooLong {
            start: format!("'{}", "a".repeat(39)),
            length: MAX_LENGTH + 1,
        }
    );
    assert_eq!(
        error.to_string(),
        format!(
            "expression \"'{}\"… is {} characters long; an expression may be at most {MAX_LENGTH} characters",
            "a".repeat(39),
            MAX_LENGTH + 1
        )
    );
    // The limit is on each expression, not on the text around them.
    let text = format!("{} ${{{{ gate }}}}", "x".repeat(3 * MAX_LENGTH));
    let got = interpolate(&json!({ "body": text }), &env()).expect("interpolated");
    assert!(got["body"].as_str().unwrap().ends_with(" production"));
}

#[test]
fn deep_expressions_in_with_fail_the_step_with_their_place() {
    let cases = [
        json!({"a": {"b": format!("${{{{ {} }}}}", nested("(", "1", ")", 50_000))}}),
        json!({"a": {"b": format!("x ${{{{ {} }}}}", "!".repeat(100_000))}}),
        json!({"a": {"b": format!("${{{{ {} }}}}", nested("(", "1", ")", 500))}}),
        json!({"a": {"b": format!("${{{{ {}1 }}}}", "-".repeat(500))}}),
    ];
    for with in cases {
        let Err(ExprError::At { path, error }) = interpolate(&with, &env()) else {
            panic!("expected an error with its place");
        };
        assert_eq!(path, "with.a.b");
        assert!(
            matches!(
                *error,
                ExprError::TooLong { .. } | ExprError::Invalid { .. }
            ),
            "{error:?}"
        );
    }
}

#[test]
fn the_deepest_expression_runs_in_a_small_stack() {
    // What the parser admits, the checker and the evaluator walk: at the limit, all
    // three fit in a quarter of a runtime worker's 2 MiB, even unoptimised (about
    // 300 KiB measured in a debug build).
    let deepest = [
        nested("(", "!failed", ")", MAX_DEPTH - 2),
        format!("{}false", "!".repeat(MAX_DEPTH - 1)),
        format!("{}steps.commit.count != 0", "-".repeat(MAX_DEPTH - 4)),
        format!("{}1 > 0", "1 + ".repeat(MAX_DEPTH - 2)),
        format!("{}true", "false || ".repeat(MAX_DEPTH - 1)),
    ];
    let worker = std::thread::Builder::new()
        .stack_size(512 << 10)
        .spawn(move || {
            deepest
                .iter()
                .map(|source| condition(source, &env()).map_err(|e| e.to_string()))
                .collect::<Vec<_>>()
        })
        .expect("a thread");
    let verdicts = worker.join().expect("no stack overflow");
    assert_eq!(
        verdicts,
        [Ok(true), Ok(true), Ok(true), Ok(true), Ok(true)],
        "{verdicts:?}"
    );
}
