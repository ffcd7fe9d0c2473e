//! The Helm chart's MCP server (`mcp.enabled`): started with flags this binary takes,
//! serving HTTP to the cluster with every caller authenticated by Kubernetes.

use clap::Parser as _;
use hecate_mcp::args::{Transport, Writes};
use hecate_testenv::{Tool, chart};

#[test]
fn the_chart_starts_the_server_over_http_with_each_caller_authenticated() {
    let helm = Tool::Helm.locate_or_build().unwrap();
    let everything = chart::everything_values();
    for (values, set, writes) in [
        (&[][..], &["mcp.enabled=true"][..], Writes::Off),
        (&[everything.as_path()], &[], Writes::AsCaller),
    ] {
        let rendered = chart::template(&helm, "hecate-system", values, set).unwrap();
        let args = chart::container_args(&rendered, "hecate-mcp").unwrap();
        let plan = hecate_mcp::Args::try_parse_from(
            std::iter::once("hecate-mcp".to_string()).chain(args.iter().cloned()),
        )
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
        .check()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let Transport::Http(http) = &plan.transport else {
            panic!("not served over HTTP: {args:?}");
        };
        assert!(http.kubernetes_auth, "{args:?}");
        assert_eq!(http.port, 8085);
        assert!(
            http.allowed_hosts
                .contains(&"hecate-mcp.hecate-system.svc".to_string()),
            "the Service's name is answered: {:?}",
            http.allowed_hosts
        );
        assert_eq!(plan.writes, writes, "{args:?}");
    }
}
