//! The template language against kubectl's own examples (the JSONPath page of the
//! Kubernetes reference, whose input is [`kubectl_input`]) and its edges: what
//! client-go prints, and what it refuses.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::Template;

/// The document of the Kubernetes JSONPath reference's examples.
fn kubectl_input() -> Value {
    json!({
        "kind": "List",
        "items": [
            {
                "kind": "None",
                "metadata": {
                    "name": "127.0.0.1",
                    "labels": {"kubernetes.io/hostname": "127.0.0.1"}
                },
                "status": {
                    "capacity": {"cpu": "4"},
                    "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}]
                }
            },
            {
                "kind": "None",
                "metadata": {"name": "127.0.0.2"},
                "status": {
                    "capacity": {"cpu": "8"},
                    "addresses": [
                        {"type": "LegacyHostIP", "address": "127.0.0.2"},
                        {"type": "another", "address": "127.0.0.3"}
                    ]
                }
            }
        ],
        "users": [
            {"name": "myself", "user": {}},
            {"name": "e2e", "user": {"username": "admin", "password": "secret"}}
        ]
    })
}

fn render(template: &str, document: &Value) -> String {
    match Template::parse(template) {
        Ok(parsed) => parsed
            .render(document)
            .unwrap_or_else(|e| panic!("{template}: {e}")),
        Err(e) => panic!("{template} does not parse: {e}"),
    }
}

fn parse_error(template: &str) -> String {
    match Template::parse(template) {
        Ok(parsed) => panic!("{template} parsed: {parsed:?}"),
        Err(e) => e.to_string(),
    }
}

fn render_error(template: &str, document: &Value) -> String {
    match Template::parse(template).map(|t| t.render(document)) {
        Ok(Ok(text)) => panic!("{template} printed {text:?}"),
        Ok(Err(e)) => e.to_string(),
        Err(e) => panic!("{template} does not parse: {e}"),
    }
}

/// The reference page's table, row by row.
#[test]
fn the_kubectl_reference_examples() {
    let input = kubectl_input();
    for (template, printed) in [
        ("kind is {.kind}", "kind is List"),
        ("{.kind}", "List"),
        ("{['kind']}", "List"),
        ("{..name}", "127.0.0.1 127.0.0.2 myself e2e"),
        ("{.items[*].metadata.name}", "127.0.0.1 127.0.0.2"),
        ("{.users[0].name}", "myself"),
        (
            "{.items[*]['metadata.name', 'status.capacity']}",
            r#"127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}"#,
        ),
        ("{.users[?(@.name==\"e2e\")].user.password}", "secret"),
        (
            "{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}",
            r#"[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] "#,
        ),
        ("{'{'}", "{"),
        (
            "{.items[*].metadata.labels.kubernetes\\.io/hostname}",
            "127.0.0.1",
        ),
        (
            r"{.items[0].metadata.labels['kubernetes\.io/hostname']}",
            "127.0.0.1",
        ),
        ("{.items[-1].metadata.name}", "127.0.0.2"),
        ("{.items[-2].metadata.name}", "127.0.0.1"),
    ] {
        assert_eq!(render(template, &input), printed, "{template}");
    }
}

#[test]
fn the_forms_scripts_use() {
    let doc = json!({
        "a": {"b": "deep"},
        "items": [
            {"metadata": {"name": "dev"}, "stage": {"index": 0}},
            {"metadata": {"name": "staging"}, "stage": {"index": 1}},
            {"metadata": {"name": "production"}, "stage": {"index": 2}}
        ]
    });
    for (template, printed) in [
        ("{.a.b}", "deep"),
        ("{$.a.b}", "deep"),
        ("{@.a.b}", "deep"),
        ("{ .a.b }", "deep"),
        ("{.items[*].metadata.name}", "dev staging production"),
        ("{.items[0].metadata.name}", "dev"),
        ("{.items[1:].metadata.name}", "staging production"),
        ("{.items[:2].metadata.name}", "dev staging"),
        ("{.items[::2].metadata.name}", "dev production"),
        ("{.items[0,2].metadata.name}", "dev production"),
        ("{.items[*].stage.index}", "0 1 2"),
        (
            "{range .items[*]}{.metadata.name}{\"\\n\"}{end}",
            "dev\nstaging\nproduction\n",
        ),
        (
            "{range .items[*]}{.metadata.name}{'\\t'}{.stage.index}{\"\\n\"}{end}",
            "dev\t0\nstaging\t1\nproduction\t2\n",
        ),
        (
            "first: {.items[0].metadata.name}, last: {.items[-1].metadata.name}",
            "first: dev, last: production",
        ),
        (
            "{.items[?(@.stage.index>=1)].metadata.name}",
            "staging production",
        ),
        ("{.items[?(@.stage.index < 1)].metadata.name}", "dev"),
        ("{.items[?(@.metadata.name!='dev')].stage.index}", "1 2"),
        ("{.a}", r#"{"b":"deep"}"#),
        ("{.items[0].stage}", r#"{"index":0}"#),
        // Text outside the braces is printed as written, escapes and all, as kubectl.
        (r"{.a.b}\n", r"deep\n"),
        ("{\"a\\\"b\"}", "a\"b"),
        ("{'x\\u00e9\\101'}", "xéA"),
        ("", ""),
        ("no actions", "no actions"),
        // Nested ranges: each `{end}` closes the innermost.
        (
            "{range .items[*]}{.metadata.name}:{range .stage.*}{@}{end};{end}",
            "dev:0;staging:1;production:2;",
        ),
    ] {
        assert_eq!(render(template, &doc), printed, "{template}");
    }
}

#[test]
fn values_print_as_kubectl_prints_them() {
    let doc = json!({
        "s": "text", "i": 42, "neg": -3, "f": 1.5, "whole": 3.0, "t": true, "n": null,
        "list": [1, "two", {"three": 3}], "empty": {}
    });
    for (template, printed) in [
        ("{.s}", "text"),
        ("{.i}", "42"),
        ("{.neg}", "-3"),
        ("{.f}", "1.5"),
        ("{.whole}", "3"),
        ("{.t}", "true"),
        ("{.n}", ""),
        ("{.list}", r#"[1,"two",{"three":3}]"#),
        ("{.list[*]}", r#"1 two {"three":3}"#),
        ("{.empty}", "{}"),
        ("{.list[2].*}", "3"),
    ] {
        assert_eq!(render(template, &doc), printed, "{template}");
    }
}

#[test]
fn what_is_missing_prints_nothing() {
    let doc = json!({"items": [{"a": 1}, {"b": 2}], "s": "text", "empty": []});
    for (template, printed) in [
        ("{.nothing}", ""),
        ("{.nothing.deeper}", ""),
        ("{.s.field}", ""),
        ("{.items[*].a}", "1"),
        ("[{.nothing}]", "[]"),
        ("{.nothing[0]}", ""),
        ("{.empty[*]}", ""),
        ("{range .empty[*]}x{end}", ""),
        ("{range .nothing[*]}x{end}done", "done"),
        ("{.items[?(@.a)].a}", "1"),
        ("{.items[?(@.a==1)].a}", "1"),
        ("{.empty[0:0]}", ""),
    ] {
        assert_eq!(render(template, &doc), printed, "{template}");
    }
}

#[test]
fn a_list_is_its_items() {
    // What output::print gives a template for a list: `-o json`'s array as `.items`.
    let doc = json!({"items": []});
    assert_eq!(render("{.items[*].metadata.name}", &doc), "");
    assert_eq!(
        render_error("{.items[0].metadata.name}", &doc),
        "array index out of bounds: index 0, length 0"
    );
}

#[test]
fn templates_that_cannot_apply_say_why() {
    let doc =
        json!({"items": [1, 2], "s": "text", "o": {"k": "v"}, "mixed": [{"v": 1}, {"v": "one"}]});
    for (template, message) in [
        (
            "{.items[2]}",
            "array index out of bounds: index 2, length 2",
        ),
        (
            "{.items[-3]}",
            "array index out of bounds: index -1, length 2",
        ),
        (
            "{.items[0:5]}",
            "array index out of bounds: index 4, length 2",
        ),
        (
            "{.items[1:0]}",
            "starting index 1 is greater than ending index 0",
        ),
        (
            "{.s[0]}",
            "a string is not an array: [0] indexes arrays only",
        ),
        (
            "{.o[*]}",
            "an object is not an array: [*] indexes arrays only",
        ),
        (
            "{.o[?(@.k)]}",
            "an object is not an array and cannot be filtered",
        ),
        (
            "{.mixed[?(@.v==1)]}",
            "cannot compare a string with a number",
        ),
        (
            "{.mixed[?(@.v==@.v)].v}{.o[?(@)]}",
            "an object is not an array and cannot be filtered",
        ),
        (
            "{[?(@==true)]}",
            "an object is not an array and cannot be filtered",
        ),
    ] {
        assert_eq!(render_error(template, &doc), message, "{template}");
    }
    assert_eq!(
        render_error("{.x[?(@.a>true)]}", &json!({"x": [{"a": false}]})),
        "booleans can only be compared with == and !="
    );
    assert_eq!(
        render_error(
            "{.x[?(@.a.*==1)]}",
            &json!({"x": [{"a": {"b": 1, "c": 2}}]})
        ),
        "can only compare one element at a time"
    );
}

#[test]
fn bad_templates_are_refused_before_any_data() {
    for (template, message) in [
        ("{.items", "unclosed action: the { at character 1 has no }"),
        (
            "name: {.a\n}",
            "unclosed action: the { at character 7 has no }",
        ),
        (
            "{.items[*}",
            "unterminated array: the [ at character 8 has no ]",
        ),
        (
            "{.items[x]}",
            "invalid array index [x] at character 8: use [n], [start:end:step], [*], [a,b] or ['key']",
        ),
        (
            "{.items[1:2:3:4]}",
            "invalid array index [1:2:3:4] at character 8: use [n], [start:end:step], [*], [a,b] or ['key']",
        ),
        (
            "{.items[-]}",
            "array index - at character 8 is not a number",
        ),
        ("{.items[::0]}", "step must be > 0, not 0 (character 8)"),
        (
            "{\"open}",
            "unterminated quoted string: the \" at character 2 has no match",
        ),
        (
            "{'bad \\q'}",
            "quoted string at character 2: \\q is not an escape",
        ),
        (
            "{.a %}",
            "unrecognized character in action: '%' at character 5",
        ),
        (
            "{#}",
            "unrecognized character in action: '#' at character 2",
        ),
        (
            "{items}",
            "unrecognized identifier items at character 2: fields begin with a dot, as in .items",
        ),
        (
            "{....a}",
            "invalid multiple recursive descent at character 4",
        ),
        ("{end}", "{end} without a {range} to end"),
        ("{range .items[*]}{.a}", "{range} without its {end}"),
        (
            "{.items range}",
            "range must begin its action, as in {range .items[*]} and {end} (character 9)",
        ),
        ("{end .a}", "{end} stands alone in its action"),
        (
            "{.items[?(@.a==1}",
            "unterminated filter: the [?( at character 8 has no )]",
        ),
        (
            "{.items[?(@.a==1)}",
            "unclosed filter: the [?( at character 8 needs ] after its )",
        ),
        (
            "{.items[?(@.a=~\"x\")]}",
            "unrecognized filter operator =~ at character 8: use ==, !=, <, >, <= or >=",
        ),
        (
            "{.items[?(@.a===1)]}",
            "unrecognized filter operator === at character 8: use ==, !=, <, >, <= or >=",
        ),
        (
            "{.items[?(==1)]}",
            "filter at character 8 needs a path, an operator and a value, as in [?(@.phase==\"Failed\")]",
        ),
        (
            "{.items[?(@.a==)]}",
            "filter at character 8 needs a path, an operator and a value, as in [?(@.phase==\"Failed\")]",
        ),
        ("{1.2.3}", "cannot parse number 1.2.3 at character 2"),
        (
            "{.a[?(@.b==c)]}",
            "unrecognized identifier c at character 12: fields begin with a dot, as in .c",
        ),
    ] {
        assert_eq!(parse_error(template), message, "{template}");
    }
}

#[test]
fn a_quoted_brace_or_paren_is_text() {
    let doc = json!({"items": [{"n": "a)b", "v": 1}, {"n": "c", "v": 2}]});
    assert_eq!(render("{.items[?(@.n==\"a)b\")].v}", &doc), "1");
    assert_eq!(render("{\"}\"}{.items[1].n}{'{'}", &doc), "}c{");
}
