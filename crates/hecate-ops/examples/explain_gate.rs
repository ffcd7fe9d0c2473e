//! What a team's own bot or policy check does with hecate-ops: explain one Gate and act
//! on each thing in its way, by its type rather than by parsing words.
//!
//! ```sh
//! cargo run -p hecate-ops --example explain_gate -- <namespace> <gate>
//! ```
//!
//! It connects as kubectl does (`KUBECONFIG`, else `~/.kube/config`, else the pod's
//! service account) and exits 0 when nothing stands in the Gate's way, 1 when
//! something does, 2 for a usage error or a Gate that is not there.

use std::process::ExitCode;

use hecate_ops::{Blocker, BlockerKind, Error, Explanation, Ops, Remedy};

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [namespace, gate] = args.as_slice() else {
        eprintln!("usage: explain_gate <namespace> <gate>");
        return ExitCode::from(2);
    };
    match run(namespace, gate).await {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {}", hecate_types::error_chain(error.as_ref()));
            ExitCode::FAILURE
        }
    }
}

async fn run(namespace: &str, gate: &str) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let client = kube::Client::try_default().await?;
    let ops = Ops::new(client);
    let explanation = match ops.explain(namespace, gate).await {
        Ok(explanation) => explanation,
        // A missing Gate is an answer, not a failure to reach the cluster.
        Err(missing @ Error::NotFound { .. }) => {
            eprintln!("{missing}");
            return Ok(ExitCode::from(2));
        }
        Err(other) => return Err(other.into()),
    };
    report(&explanation);
    Ok(if explanation.blockers.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn report(explanation: &Explanation) {
    println!(
        "{}/{}: {} — {}",
        explanation.namespace,
        explanation.gate,
        explanation.state.as_str(),
        explanation.summary
    );
    if let Some(current) = &explanation.current {
        println!("  current:  {current}");
    }
    if !explanation.eligible.is_empty() {
        println!("  eligible: {}", explanation.eligible.join(", "));
    }
    for waiting in &explanation.waiting {
        println!("  waiting:  {} ({})", waiting.bundle, waiting.reason);
    }
    if explanation.blockers.is_empty() {
        println!("nothing stands in its way");
        return;
    }
    println!("in its way:");
    for blocker in &explanation.blockers {
        println!("- {} ({})", blocker.detail, blocker.kind.as_str());
        println!("  who acts: {}", who_acts(blocker));
        match &blocker.action {
            Some(remedy) => println!("  fix:      {}", call(remedy, &explanation.namespace)),
            None => println!("  fix:      none that a command performs"),
        }
    }
}

/// Who can remove `blocker`: the part a bot decides for itself, from the typed kind.
fn who_acts(blocker: &Blocker) -> String {
    match blocker.kind {
        BlockerKind::Suspended => "whoever suspended the Gate".into(),
        BlockerKind::InvalidSteps | BlockerKind::NoPassage => "the Gate's owner".into(),
        BlockerKind::NoBundles => "the Beacon: nothing has been released yet".into(),
        BlockerKind::NotApproved => "an approver (not the person who promotes)".into(),
        BlockerKind::Upstream => "the upstream Gate's owner".into(),
        BlockerKind::WindowClosed => match &blocker.until {
            Some(until) => format!("nobody: the window opens at {}", until.0),
            None => "nobody while the window is closed".into(),
        },
        BlockerKind::PassageFailed => "the owner of the step that failed".into(),
        BlockerKind::StepWaiting => "nobody yet: a step is waiting on its target".into(),
        BlockerKind::NotStarted => "the cluster's operators: no controller runs it".into(),
        BlockerKind::ChangeHeld => "the change's approvers, in Fides".into(),
        BlockerKind::Unhealthy => "the environment's owner: what it runs is unwell".into(),
        BlockerKind::Manual => "anyone allowed to promote".into(),
        BlockerKind::Rejected => {
            "whoever rejected the Bundle, or an approver the Gate names".into()
        }
        BlockerKind::VerificationFailed => {
            "anyone allowed to promote: roll back, or fix forward".into()
        }
        BlockerKind::RolloutHalted => {
            "anyone allowed to promote: retry the failed targets, accept them, or abort".into()
        }
    }
}

/// The fix as this bot would perform it: the [`Ops`] call where there is one, else
/// the words ops gives ([`Remedy::fix`]).
fn call(remedy: &Remedy, namespace: &str) -> String {
    match remedy {
        Remedy::Promote { gate, bundle } | Remedy::PromoteUpstream { gate, bundle } => {
            format!("ops.promote({namespace:?}, {gate:?}, {bundle:?}, actor)")
        }
        Remedy::Approve { gate, bundle, .. } => {
            format!("ops.approve({namespace:?}, {bundle:?}, {gate:?}, actor)")
        }
        Remedy::Rollback { gate } => {
            format!("ops.rollback({namespace:?}, {gate:?}, None, actor)")
        }
        Remedy::InspectPassage { passage } => {
            format!("ops.passage({namespace:?}, {passage:?}), then read its steps")
        }
        Remedy::RetryTargets { passage, .. } => {
            format!("ops.retry({namespace:?}, {passage:?}, actor)")
        }
        Remedy::AcceptFailures { passage, .. } => {
            format!("ops.accept_failures({namespace:?}, {passage:?}, actor, reason)")
        }
        Remedy::RollbackTargets { gate, passage, .. } => format!(
            "ops.abort({namespace:?}, {passage:?}, actor), then ops.rollback_targets({namespace:?}, {gate:?}, &RollBack::Failed, actor)"
        ),
        Remedy::RollbackFailedTargets { gate, .. } => {
            format!("ops.rollback_targets({namespace:?}, {gate:?}, &RollBack::Failed, actor)")
        }
        Remedy::Abort { passage } => format!("ops.abort({namespace:?}, {passage:?}, actor)"),
        Remedy::Resume { .. }
        | Remedy::Wait
        | Remedy::AddSteps { .. }
        | Remedy::FixSteps { .. }
        | Remedy::CheckBeacons
        | Remedy::ResolveInFides
        | Remedy::CheckController
        | Remedy::WithdrawRejection { .. } => remedy.fix(namespace),
    }
}
