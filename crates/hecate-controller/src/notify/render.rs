//! A notice as each destination takes it: Slack's Block Kit, a Teams Adaptive Card,
//! the JSON a webhook receives. Formatting only: what a notice says was judged in
//! hecate-ops ([`hecate_ops::rules::notice`]).

use hecate_ops::model::Notice;
use hecate_types::Severity;
use serde_json::{Value, json};

/// Where the UI is, for links: `--ui-url`.
#[derive(Clone, Debug, Default)]
pub struct Links {
    /// The UI's base URL, without a trailing slash; empty when the operator gave none.
    pub ui: String,
}

impl Links {
    /// The page a notice is about: its Passage's, else its Gate's.
    pub fn of(&self, notice: &Notice) -> Option<String> {
        if self.ui.is_empty() {
            return None;
        }
        let (page, name) = match &notice.passage {
            Some(passage) => ("passages", passage.as_str()),
            None => ("gates", notice.gate.as_str()),
        };
        let mut url = reqwest::Url::parse(&format!("{}/{page}/", self.ui)).ok()?;
        url.query_pairs_mut()
            .append_pair("namespace", &notice.namespace)
            .append_pair("name", name);
        Some(url.into())
    }
}

/// The JSON a webhook (`generic`, `generic-hmac`) receives: the notice itself, and the
/// link to its page.
pub fn generic(notice: &Notice, links: &Links) -> Value {
    let mut body = serde_json::to_value(notice).unwrap_or_else(|_| json!({}));
    if let (Some(object), Some(link)) = (body.as_object_mut(), links.of(notice)) {
        object.insert("link".into(), Value::String(link));
    }
    body
}

/// A Slack message (an incoming webhook's body, or `chat.postMessage`'s without its
/// channel): a heading with the Gate, what happened, the facts, the command that
/// settles it and a button to its page. Text from records (a commit subject in a
/// failure, a person's reason) is escaped, so it cannot mention `@channel` or forge a
/// link.
pub fn slack(notice: &Notice, links: &Links) -> Value {
    let icon = match notice.severity {
        Severity::Error => ":warning:",
        Severity::Info => ":white_check_mark:",
    };
    let mut blocks = vec![
        json!({
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": format!(
                    "{icon} *{}* · {}/{}\n{}",
                    notice.kind.title(),
                    slack_escape(&notice.namespace),
                    slack_escape(&notice.gate),
                    slack_escape(&notice.summary)
                ),
            },
        }),
        json!({
            "type": "context",
            "elements": facts(notice)
                .into_iter()
                .map(|(title, value)| json!({
                    "type": "mrkdwn",
                    "text": format!("*{title}:* {}", slack_escape(&value)),
                }))
                .collect::<Vec<_>>(),
        }),
    ];
    if let Some(command) = &notice.command {
        blocks.push(json!({
            "type": "section",
            "text": {"type": "mrkdwn", "text": format!("*Next:* {}", slack_escape(command))},
        }));
    }
    if let Some(link) = links.of(notice) {
        blocks.push(json!({
            "type": "actions",
            "elements": [{
                "type": "button",
                "text": {"type": "plain_text", "text": "Open in Hecate"},
                "url": link,
            }],
        }));
    }
    json!({
        // What a phone's notification and a screen reader show.
        "text": format!("{}: {}", notice.kind.title(), slack_escape(&notice.summary)),
        "blocks": blocks,
    })
}

/// A Microsoft Teams message for a workflow webhook: one Adaptive Card (1.4).
pub fn teams(notice: &Notice, links: &Links) -> Value {
    let color = match notice.severity {
        Severity::Error => "Attention",
        Severity::Info => "Good",
    };
    let mut body = vec![
        json!({
            "type": "TextBlock",
            "text": format!("{} · {}/{}", notice.kind.title(), notice.namespace, notice.gate),
            "weight": "Bolder",
            "size": "Medium",
            "color": color,
            "wrap": true,
        }),
        json!({"type": "TextBlock", "text": notice.summary, "wrap": true}),
        json!({
            "type": "FactSet",
            "facts": facts(notice)
                .into_iter()
                .map(|(title, value)| json!({"title": title, "value": value}))
                .collect::<Vec<_>>(),
        }),
    ];
    if let Some(command) = &notice.command {
        body.push(json!({
            "type": "TextBlock",
            "text": command,
            "fontType": "Monospace",
            "wrap": true,
        }));
    }
    let actions: Vec<Value> = links
        .of(notice)
        .map(|url| json!({"type": "Action.OpenUrl", "title": "Open in Hecate", "url": url}))
        .into_iter()
        .collect();
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "content": {
                "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                "type": "AdaptiveCard",
                "version": "1.4",
                "body": body,
                "actions": actions,
            },
        }],
    })
}

/// The facts beside a notice: its Bundle and version, its Passage, who acted.
fn facts(notice: &Notice) -> Vec<(&'static str, String)> {
    let mut facts = Vec::new();
    match (&notice.version, &notice.bundle) {
        (Some(version), Some(bundle)) => facts.push(("Bundle", format!("{version} ({bundle})"))),
        (None, Some(bundle)) => facts.push(("Bundle", bundle.clone())),
        _ => {}
    }
    if let Some(passage) = &notice.passage {
        facts.push(("Passage", passage.clone()));
    }
    if let Some(actor) = &notice.actor {
        facts.push(("By", actor.clone()));
    }
    facts
}

/// Slack's three control characters, escaped as Slack asks: `<!channel>`, `<@U…>` and
/// `<url|text>` from a record stay text.
fn slack_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use hecate_ops::model::Remedy;
    use hecate_types::{NoticeKind, Time};

    use super::*;

    fn approval_wanted() -> Notice {
        let action = Remedy::Approve {
            gate: "production".into(),
            bundle: "app-7f3a".into(),
            from: vec!["dave".into()],
        };
        Notice {
            key: "shop/production/app-7f3a/ApprovalWanted".into(),
            kind: NoticeKind::ApprovalWanted,
            severity: Severity::Error,
            namespace: "shop".into(),
            gate: "production".into(),
            bundle: Some("app-7f3a".into()),
            version: Some("1.3.0".into()),
            passage: None,
            revision: None,
            actor: None,
            at: None,
            summary: "production: 1.3.0: 1 of 2 approvals from release-managers; an approval from dave would count".into(),
            command: Some(action.fix("shop")),
            action: Some(action),
        }
    }

    fn crossing_failed() -> Notice {
        Notice {
            key: "shop/staging/staging-7@01234567/CrossingFailed".into(),
            kind: NoticeKind::CrossingFailed,
            severity: Severity::Error,
            namespace: "shop".into(),
            gate: "staging".into(),
            bundle: Some("app-7f3a".into()),
            version: Some("1.3.0".into()),
            passage: Some("staging-7".into()),
            revision: None,
            actor: Some("bob".into()),
            at: Some(Time("2026-12-07T10:00:00Z".parse().unwrap())),
            summary: "staging: the crossing of 1.3.0 failed at git-push [PushRejected]: <!channel> rejected".into(),
            action: None,
            command: None,
        }
    }

    fn links() -> Links {
        Links {
            ui: "https://hecate.example.com".into(),
        }
    }

    #[test]
    fn slack_shows_what_waits_whose_approval_counts_the_command_and_the_page() {
        insta::assert_json_snapshot!(slack(&approval_wanted(), &links()));
    }

    #[test]
    fn slack_escapes_what_records_say() {
        let body = slack(&crossing_failed(), &links()).to_string();
        assert!(!body.contains("<!channel>"), "{body}");
        assert!(body.contains("&lt;!channel&gt;"), "{body}");
    }

    #[test]
    fn teams_gets_one_adaptive_card() {
        insta::assert_json_snapshot!(teams(&crossing_failed(), &links()));
    }

    #[test]
    fn a_webhook_gets_the_notice_and_its_page() {
        insta::assert_json_snapshot!(generic(&crossing_failed(), &links()));
    }

    #[test]
    fn without_the_uis_address_there_is_no_link() {
        let body = slack(&approval_wanted(), &Links::default());
        assert!(!body.to_string().contains("Open in Hecate"));
        assert_eq!(
            generic(&approval_wanted(), &Links::default()).get("link"),
            None
        );
    }
}
