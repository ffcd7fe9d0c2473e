//! The pipeline as a graph (issue 20, finding 4): an SVG with a line from each
//! upstream to its downstream, columns from ops' stages, every node a link saying its
//! state; on a phone the graph scrolls inside its box instead of being cut off; and
//! the overview's totals open the lists they count. As alice, a viewer.

use hecate_testenv::Identity::*;
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::harness::*;
use crate::ui_browser::*;
use crate::ui_rights::{at, demo_as_deployed, drawn};

#[tokio::test]
async fn the_pipeline_is_a_graph_of_links_and_totals_open_their_lists() {
    let server = Server::start().await;
    demo_as_deployed(&server).await;
    let browser = Browser::start(&server.base).await;
    let ns = server.ns().to_string();

    browser.open(&at(&server, "/gates/")).await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "Gates").await;
    browser
        .until(
            "the graph's three Gates",
            "document.querySelectorAll('.graph-svg a[data-gate]').length === 3",
        )
        .await;

    // Lines from upstream to downstream: the Beacon into dev, dev into staging,
    // staging into production (which needs an approval: the line says so).
    let lines = browser
        .js(
            "return [...document.querySelectorAll('.graph-line')].map(g => [g.dataset.from, g.dataset.to, g.classList.contains('graph-approval'), !!g.querySelector('path')]).sort((a, b) => (a[0] + a[1]).localeCompare(b[0] + b[1]));",
            vec![],
        )
        .await;
    assert_eq!(
        lines,
        json!([
            ["dev", "staging", false, true],
            ["shop", "dev", false, true],
            ["staging", "production", true, true],
        ])
    );
    // Each node a link to its Gate, saying its state and health in words, in the
    // column of its stage (left to right, as ops ordered them).
    let nodes = browser
        .js(
            "return [...document.querySelectorAll('.graph-svg a[data-gate]')].map(a => [a.dataset.gate, a.getAttribute('href'), a.dataset.state, a.dataset.health, a.getAttribute('aria-label'), Math.round(a.getBoundingClientRect().left)]);",
            vec![],
        )
        .await;
    let overview = server
        .get("/api/v1alpha1/overview", Some(Alice))
        .await
        .json();
    let summaries = overview["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["namespace"] == ns.as_str())
        .unwrap()["gates"]
        .clone();
    let mut lefts = Vec::new();
    for (node, summary) in nodes
        .as_array()
        .unwrap()
        .iter()
        .zip(summaries.as_array().unwrap())
    {
        let name = summary["name"].as_str().unwrap();
        assert_eq!(node[0], name);
        assert_eq!(
            node[1],
            format!("/gates/?name={name}&namespace={ns}"),
            "a link to the Gate"
        );
        assert_eq!(node[2], summary["state"], "{name}'s state is the server's");
        assert_eq!(node[3], summary["health"]);
        let label = node[4].as_str().unwrap();
        // The words drawn on the node first (label in name).
        assert!(
            label.starts_with(&format!(
                "{name}, {} · {}",
                summary["state"].as_str().unwrap(),
                summary["health"].as_str().unwrap()
            )),
            "{label}"
        );
        lefts.push(node[5].as_i64().unwrap());
    }
    assert!(
        lefts.windows(2).all(|w| w[0] < w[1]),
        "upstream to the left of downstream: {lefts:?}"
    );
    browser
        .until_text(
            ".graph-svg a[data-gate=staging]",
            "crossing: staging-1-11-0",
        )
        .await;
    let axe = crate::ui_axe::check(&browser, "the Gates page").await;
    browser.screenshot("graph", 1280).await;

    // On a phone the graph keeps its size and its box scrolls (pans); the page does
    // not scroll sideways.
    let (width, height) = crate::ui_axe::PHONE;
    browser.client.set_window_size(width, height).await.unwrap();
    let fit = browser
        .js(
            "const box = document.querySelector('.graph-scroll'); box.scrollLeft = 300; \
             return [box.scrollWidth > box.clientWidth, box.scrollLeft > 0, document.documentElement.scrollWidth <= window.innerWidth];",
            vec![],
        )
        .await;
    assert_eq!(fit, json!([true, true, true]), "the graph pans in its box");
    browser.screenshot("graph-phone", width).await;

    // A node is a link: production's page opens.
    browser.client.set_window_size(1280, 900).await.unwrap();
    browser
        .js(
            "document.querySelector('.graph-scroll').scrollLeft = 0;",
            vec![],
        )
        .await;
    browser.click(".graph-svg a[data-gate=production]").await;
    drawn(&browser, "production").await;
    assert_eq!(
        browser.js("return location.search;", vec![]).await,
        format!("?name=production&namespace={ns}")
    );

    // The overview's totals are links: "failed crossings" opens the failed Passages
    // of this namespace (alice may read other tests' namespaces too; each has its own
    // link when several hold some).
    browser.open(&at(&server, "/")).await;
    drawn(&browser, "Overview").await;
    let failed = format!("[data-total=failed] a[href*='namespace={ns}']");
    browser
        .until(
            &format!("{failed} is there"),
            &format!("document.querySelector(\"{failed}\")"),
        )
        .await;
    // The activity chart's day labels are text beside it, not stretched with it.
    assert_eq!(
        browser
            .js(
                "return [document.querySelectorAll('.chart-days li').length, document.querySelectorAll('svg.chart text').length];",
                vec![],
            )
            .await,
        json!([14, 0])
    );
    browser.screenshot("overview-totals", 1280).await;
    browser.click(&failed).await;
    drawn(&browser, "Passages").await;
    browser
        .until_text("[data-filter=Failed]", "Only the Passages that failed")
        .await;
    let rows: Value = browser
        .js(
            "return [...document.querySelectorAll('main tbody tr')].map(r => r.dataset.passage);",
            vec![],
        )
        .await;
    assert_eq!(
        rows,
        json!(["production-1-7-0"]),
        "the failed Passage, only"
    );
    // "crossing now" opens the Gates crossing now.
    browser.open(&at(&server, "/")).await;
    drawn(&browser, "Overview").await;
    let crossing = format!("[data-total=running] a[href*='namespace={ns}']");
    browser.click(&crossing).await;
    drawn(&browser, "Passages").await;
    browser
        .until(
            "only the crossings under way",
            "[...document.querySelectorAll('main tbody tr')].map(r => r.dataset.passage).join() === 'staging-1-11-0'",
        )
        .await;
    // "waiting to cross" counts only Bundles newer than a Gate's current one: in the
    // fixed pipeline every eligible Bundle is an older one (a rollback candidate), so
    // nothing waits until carol approves 1.10.0 for production.
    let ahead = |overview: &Value| -> Vec<(String, u64, u64)> {
        overview["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["namespace"] == ns.as_str())
            .unwrap()["gates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                let n = |key: &str| g[key].as_u64().unwrap_or(0);
                (
                    g["name"].as_str().unwrap().to_string(),
                    n("eligible"),
                    n("ahead"),
                )
            })
            .collect()
    };
    let before = ahead(&overview);
    assert!(
        before.iter().all(|(_, _, ahead)| *ahead == 0),
        "rollback candidates are not waiting: {before:?}"
    );
    assert!(
        before.iter().any(|(_, eligible, _)| *eligible > 0),
        "{before:?}"
    );
    let bundle = hecate_testenv::demo::awaiting_approval().name_any();
    let approved = server
        .post(
            &format!("/api/v1alpha1/namespaces/{ns}/bundles/{bundle}/approve"),
            Some(Carol),
            Some(r#"{"gate":"production"}"#),
        )
        .await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    let after = ahead(
        &server
            .get("/api/v1alpha1/overview", Some(Alice))
            .await
            .json(),
    );
    browser.open(&at(&server, "/gates/?show=waiting")).await;
    drawn(&browser, "Gates").await;
    browser
        .until_text("main", "Gates with Bundles waiting to cross")
        .await;
    let waiting: Vec<&str> = after
        .iter()
        .filter(|(_, _, ahead)| *ahead > 0)
        .map(|(name, _, _)| name.as_str())
        .collect();
    assert_eq!(waiting, ["production"], "{after:?}");
    let cards = browser
        .js(
            "return [...document.querySelectorAll('main .gate-card')].map(c => c.dataset.gate).sort();",
            vec![],
        )
        .await;
    let mut expected = waiting.clone();
    expected.sort_unstable();
    assert!(!expected.is_empty());
    assert_eq!(
        cards,
        json!(expected),
        "only the Gates with Bundles waiting"
    );
    assert_eq!(axe, [0, 0]);
    browser.close().await;
}
