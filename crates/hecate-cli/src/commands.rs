//! Each command: connect, call hecate-ops, print. Nothing here judges anything.

use std::pin::Pin;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt as _, StreamExt as _};
use hecate_ops::model::RollbackAsked;
use hecate_ops::{DiffAgainst, Operation, Ops, Promoted, RolledBack, Scope};
use hecate_types::{Passage, PassagePhase, StepPhase};
use kube::ResourceExt as _;

use crate::cli::{Cli, Command, FluxAction, FluxArgs, Format};
use crate::context::Context;
use crate::exit;
use crate::failure::{Failure, Mode};
use crate::output::{self, Colour, Style};
use crate::render::{self, Written};

/// The operation a command performs, as ops' catalogue names it: what a refusal by
/// the cluster says the command needs.
fn operation(command: &Command) -> Option<Operation> {
    Some(match command {
        // Across namespaces, no one namespace to name.
        Command::Status {
            all_namespaces: true,
            ..
        } => return None,
        Command::Status { .. } => Operation::Overview,
        Command::Explain { .. } => Operation::Explain,
        Command::Targets { .. } => Operation::Targets,
        Command::Gates { .. } => Operation::ListGates,
        Command::Bundles { .. } => Operation::ListBundles,
        Command::Diff { .. } => Operation::GetBundle,
        Command::Passages { .. } => Operation::ListPassages,
        Command::Beacons { .. } => Operation::ListBeacons,
        Command::Notifications { .. } => Operation::Notifications,
        Command::Audit { .. } => Operation::Audit,
        Command::Metrics { .. } => Operation::Delivery,
        Command::Evidence { .. } => Operation::Evidence,
        Command::Preflight { .. } => Operation::Preflight,
        Command::Flux(FluxArgs { action: None, .. }) => Operation::FluxResources,
        Command::Flux(FluxArgs {
            action: Some(FluxAction::Reconcile(_)),
            ..
        }) => Operation::ReconcileFlux,
        Command::Flux(_) => Operation::SuspendFlux,
        Command::Verify(_) => Operation::Verify,
        Command::Promote { .. } => Operation::Promote,
        Command::Rollback { .. } => Operation::Rollback,
        Command::Approve { .. } => Operation::Approve,
        Command::Reject { withdraw: true, .. } => Operation::WithdrawRejection,
        Command::Reject { .. } => Operation::Reject,
        Command::Approvals { .. } => Operation::Approvals,
        Command::Abort { .. } => Operation::Abort,
        Command::Retry { .. } => Operation::RetryTargets,
        Command::AcceptFailures { .. } => Operation::AcceptFailures,
        Command::Poll { .. } => Operation::Poll,
        Command::Completion { .. } | Command::Man | Command::Version | Command::Complete { .. } => {
            return None;
        }
    })
}

/// Runs the command; `Ok` carries the exit code of a command that ran to its answer.
pub(crate) async fn run(cli: Cli, style: Style) -> Result<u8, Failure> {
    match cli.command {
        Command::Completion { shell } => {
            output::write_exact(&crate::complete::script(shell, style.invocation.name))?;
            return Ok(exit::OK);
        }
        Command::Man => {
            output::write_exact(&crate::complete::man_page(style.invocation.name)?)?;
            return Ok(exit::OK);
        }
        Command::Version => {
            output::write_text(&format!(
                "{} {}\n",
                style.invocation.name,
                env!("CARGO_PKG_VERSION")
            ))?;
            return Ok(exit::OK);
        }
        Command::Complete { words } => {
            output::write_text(&crate::complete::candidates(&cli.cluster, &words).await)?;
            return Ok(exit::OK);
        }
        Command::Verify(args) => return verify(&cli.cluster, args, &style).await,
        _ => {}
    }
    let cx = Context::connect(&cli.cluster).await?;
    let ops = Ops::new(cx.client.clone())
        .with_fides_server(cli.cluster.fides_server.clone().unwrap_or_default());
    let ns = cx.namespace.clone();
    let operation = operation(&cli.command);
    let fail = |mode, e| {
        let failure = Failure::from_ops(&cx.server, mode, e);
        match operation {
            Some(operation) => failure.needing(operation, &ns),
            None => failure,
        }
    };
    let read = |e| fail(Mode::Read, e);
    let write = |e| fail(Mode::Write, e);
    match cli.command {
        Command::Status {
            all_namespaces,
            watch,
            output,
        } => {
            let scope = if all_namespaces {
                Scope::All
            } else {
                Scope::Namespaces(vec![ns.clone()])
            };
            if watch {
                return watch_status(
                    &ops,
                    &scope,
                    all_namespaces,
                    &ns,
                    &output.format,
                    &style,
                    &cx.server,
                )
                .await;
            }
            // The reference's value: every Gate's Explanation, upstream first.
            let explanations = ops.explanations(&scope).await.map_err(read)?;
            output::print(&output.format, &explanations, |columns| {
                render::status(&explanations, all_namespaces, &ns, columns, &style)
            })?;
        }
        Command::Explain { gate, output, ai } => {
            let explanation = ops.explain(&ns, &gate).await.map_err(read)?;
            // Its text is no table: wide prints it as it is.
            output::print(&output.format, &explanation, |_| {
                render::explain(&explanation, &style)
            })?;
            if ai {
                explain_ai(&output.format, &explanation).await;
            }
        }
        Command::Notifications { gate, output } => {
            let told = ops
                .notifications(&ns, gate.as_deref())
                .await
                .map_err(read)?;
            output::print(&output.format, &told, |columns| {
                render::notifications(&told, ops.now(), columns, &style)
            })?;
        }
        Command::Targets { gate, output } => {
            let targets = ops.targets(&ns, &gate).await.map_err(read)?;
            output::print(&output.format, &targets, |columns| {
                render::targets(&targets, ops.now(), columns, &style)
            })?;
        }
        Command::Gates { output } => {
            let gates = ops.staged_gates(&ns).await.map_err(read)?;
            output::print(&output.format, &gates, |columns| {
                render::gates(&gates, &ns, ops.now(), columns, &style)
            })?;
        }
        Command::Bundles { output } => {
            let bundles = ops.bundles(&ns).await.map_err(read)?;
            output::print(&output.format, &bundles, |columns| {
                render::bundles(&bundles, &ns, ops.now(), columns, &style)
            })?;
        }
        Command::Diff {
            bundle,
            against,
            output,
        } => {
            let against = against.map_or(DiffAgainst::Previous, DiffAgainst::Named);
            let diff = ops.diff(&ns, &bundle, against).await.map_err(read)?;
            output::print(&output.format, &diff, |columns| {
                render::diff(&diff, columns, &style)
            })?;
        }
        Command::Passages {
            gate,
            bundle,
            output,
        } => {
            let (passages, versions) = futures::try_join!(
                ops.passages(&ns, gate.as_deref(), bundle.as_deref()),
                versions(&ops, &ns)
            )
            .map_err(read)?;
            output::print(&output.format, &passages, |columns| {
                render::passages(&passages, &versions, &ns, ops.now(), columns, &style)
            })?;
        }
        Command::Beacons { output } => {
            let beacons = ops.beacons(&ns).await.map_err(read)?;
            output::print(&output.format, &beacons, |columns| {
                render::beacons(&beacons, &ns, ops.now(), columns, &style)
            })?;
        }
        Command::Metrics {
            gate,
            since,
            output,
        } => {
            let delivery = ops
                .delivery(&ns, gate.as_deref(), since)
                .await
                .map_err(read)?;
            output::print(&output.format, &delivery, |columns| {
                render::delivery(&delivery, columns, &style)
            })?;
        }
        Command::Audit { output } => {
            let entries = ops.audit(&ns).await.map_err(read)?;
            output::print(&output.format, &entries, |columns| {
                render::audit(&entries, &ns, columns, &style)
            })?;
        }
        Command::Promote {
            gate,
            bundle,
            dry_run: true,
            output,
            ..
        } => {
            let actor = cx.whoami().await?;
            let preview = ops
                .preview(&ns, &gate, &bundle, &actor.name)
                .await
                .map_err(write)?;
            let written = Written {
                action: "preview",
                answer: &preview,
            };
            output::print(&output.format, &written, |_| {
                render::preview(&preview, &style)
            })?;
            if preview.refused.is_some() {
                return Ok(exit::REFUSED);
            }
        }
        Command::Promote {
            gate,
            bundle,
            watch,
            timeout,
            output,
            ..
        } => {
            let timeout = timeout.as_deref().map(parse_timeout).transpose()?;
            let actor = cx.whoami().await?;
            let passage = ops
                .promote(&ns, &gate, &bundle, &actor.name)
                .await
                .map_err(write)?;
            // Listening from the moment the Passage exists (before it is printed):
            // Ctrl-C from now on says the crossing goes on, never kills us silently.
            let interrupted = watch.then(interrupt);
            let promoted = Promoted::from(&passage);
            let written = Written {
                action: "promote",
                answer: &promoted,
            };
            output::print(&output.format, &written, |_| render::promoted(&promoted))?;
            if let Some(interrupted) = interrupted {
                return watch_crossing(&ops, &ns, &passage, timeout, interrupted, &style).await;
            }
        }
        Command::Rollback {
            gate,
            to,
            targets,
            output,
        } => {
            // The flags are the request's fields; what they mean together is ops'.
            let asked = hecate_ops::model::RollbackRequest { to, targets }
                .asked()
                .map_err(|problem| Failure::usage(problem.0))?;
            let actor = cx.whoami().await?;
            let passage = match asked {
                RollbackAsked::Targets(which) => {
                    ops.rollback_targets(&ns, &gate, &which, &actor.name).await
                }
                RollbackAsked::Gate(to) => {
                    ops.rollback(&ns, &gate, to.as_deref(), &actor.name).await
                }
            }
            .map_err(write)?;
            let rolled_back = RolledBack::from(&passage);
            let written = Written {
                action: "rollback",
                answer: &rolled_back,
            };
            output::print(&output.format, &written, |_| {
                render::rolled_back(&rolled_back)
            })?;
        }
        Command::Approve {
            bundle,
            gate,
            output,
        } => {
            let actor = cx.whoami().await?;
            let approved = ops
                .approve(&ns, &bundle, &gate, actor)
                .await
                .map_err(write)?;
            let written = Written {
                action: "approve",
                answer: &approved,
            };
            output::print(&output.format, &written, |_| render::approved(&approved))?;
        }
        Command::Reject {
            bundle,
            gate,
            reason,
            withdraw,
            output,
        } => {
            let actor = cx.whoami().await?;
            if withdraw {
                let withdrawn = ops
                    .withdraw_rejection(&ns, &bundle, &gate, actor)
                    .await
                    .map_err(write)?;
                let written = Written {
                    action: "withdraw-rejection",
                    answer: &withdrawn,
                };
                output::print(&output.format, &written, |_| render::withdrawn(&withdrawn))?;
            } else {
                let rejected = ops
                    .reject(&ns, &bundle, &gate, actor, &reason.unwrap_or_default())
                    .await
                    .map_err(write)?;
                let written = Written {
                    action: "reject",
                    answer: &rejected,
                };
                output::print(&output.format, &written, |_| render::rejected(&rejected))?;
            }
        }
        Command::Approvals { output } => {
            let me = cx.whoami().await?;
            let queue = ops.approval_queue(&ns, &me).await.map_err(read)?;
            output::print(&output.format, &queue, |columns| {
                render::approvals(&queue, &ns, columns, &style)
            })?;
        }
        Command::Abort { passage, output } => {
            let actor = cx.whoami().await?;
            let aborted = ops.abort(&ns, &passage, &actor.name).await.map_err(write)?;
            let written = Written {
                action: "abort",
                answer: &aborted,
            };
            output::print(&output.format, &written, |_| render::aborted(&aborted))?;
        }
        Command::Retry { passage, output } => {
            let actor = cx.whoami().await?;
            let asked = ops.retry(&ns, &passage, &actor.name).await.map_err(write)?;
            let written = Written {
                action: "retry",
                answer: &asked,
            };
            output::print(&output.format, &written, |_| render::rollout_asked(&asked))?;
        }
        Command::AcceptFailures {
            passage,
            reason,
            output,
        } => {
            let actor = cx.whoami().await?;
            let asked = ops
                .accept_failures(&ns, &passage, &actor.name, &reason)
                .await
                .map_err(write)?;
            let written = Written {
                action: "accept-failures",
                answer: &asked,
            };
            output::print(&output.format, &written, |_| render::rollout_asked(&asked))?;
        }
        Command::Poll {
            beacon,
            wait,
            timeout,
            output,
        } => {
            let timeout = timeout.as_deref().map(parse_timeout).transpose()?;
            let polled = ops.poll(&ns, &beacon).await.map_err(write)?;
            let written = Written {
                action: "poll",
                answer: &polled,
            };
            output::print(&output.format, &written, |_| render::polled(&polled))?;
            if wait {
                return wait_for_poll(&ops, &ns, &beacon, &polled.requested_at, timeout).await;
            }
        }
        Command::Evidence { bundle, output } => {
            let evidence = ops.evidence(&ns, &bundle).await.map_err(read)?;
            output::print(&output.format, &evidence, |_| {
                render::evidence(&evidence, &style)
            })?;
        }
        Command::Preflight { gate, output } => {
            let verdicts = ops.preflight(&ns, &gate).await.map_err(read)?;
            output::print(&output.format, &verdicts, |columns| {
                render::preflight(&verdicts, &gate, columns, &style)
            })?;
        }
        Command::Flux(FluxArgs {
            gate,
            output,
            action: None,
        }) => {
            let gate = gate.unwrap_or_default();
            let resources = ops.flux_resources(&ns, &gate).await.map_err(read)?;
            output::print(&output.format, &resources, |columns| {
                render::flux(&resources, &gate, columns, &style)
            })?;
        }
        Command::Flux(FluxArgs {
            action: Some(action),
            ..
        }) => return flux_action(&ops, &cx, &ns, action, write).await,
        Command::Completion { .. }
        | Command::Man
        | Command::Version
        | Command::Complete { .. }
        | Command::Verify(_) => {}
    }
    Ok(exit::OK)
}

/// The versions of `namespace`'s Bundles for a table that names them
/// ([`render::versions`]): one LIST.
async fn versions(ops: &Ops, namespace: &str) -> hecate_ops::Result<render::Versions> {
    Ok(render::versions(&ops.bundles(namespace).await?))
}

/// `explain --ai`: the model's phrasing after the table (table mode only). It never
/// changes the exit code: whatever goes wrong is a note on stderr.
async fn explain_ai(format: &Format, explanation: &hecate_ops::Explanation) {
    let (out, err) = if format.is_table() {
        let config = crate::ai::Config::from_env(|name| std::env::var(name).ok());
        crate::ai::phrase(&config, explanation).await
    } else {
        (
            String::new(),
            "\n--ai phrases the table only; with -o the explanation is printed alone\n".to_string(),
        )
    };
    let _ = output::write_text(&out);
    let _ = std::io::Write::write_all(&mut std::io::stderr(), output::shown(&err).as_bytes());
}

fn parse_timeout(text: &str) -> Result<Duration, Failure> {
    let duration = hecate_types::duration::parse(text)
        .map_err(|e| Failure::usage(format!("--timeout: {e}")))?;
    duration
        .try_into()
        .map_err(|_| Failure::usage(format!("--timeout must be positive, not {text}")))
}

/// How long after the instant ops names as the next change by time `status --watch`
/// redraws: the clock that judged and the timer are not the same clock.
const TIME_MARGIN: Duration = Duration::from_millis(100);

/// Redraws the status whenever a Gate, Bundle, Passage or Beacon changes (from a watch;
/// bursts of changes are drawn once), and when time alone changes what is said (ops
/// says when: a window opening or closing, a crossing not started after 2 minutes).
/// Ctrl-C ends it; a lost watch exits 2.
async fn watch_status(
    ops: &Ops,
    scope: &Scope,
    all_namespaces: bool,
    namespace: &str,
    format: &Format,
    style: &Style,
    server: &str,
) -> Result<u8, Failure> {
    let mut interrupted = interrupt();
    // Watching before the first read: a change between the two is not missed.
    let mut changes = Box::pin(
        ops.changes(scope)
            .await
            .map_err(|e| Failure::from_ops(server, Mode::Read, e))?,
    );
    loop {
        let hecate_ops::TimedExplanations {
            explanations,
            at,
            unchanged_until,
        } = ops
            .explanations_until(scope)
            .await
            .map_err(|e| Failure::from_ops(server, Mode::Read, e))?;
        // Time changes what is said too (a window opening, a crossing not started):
        // redraw then as well, a little after, so the rule has flipped.
        let by_time = unchanged_until.map(|until| {
            let wait = Duration::try_from(until.duration_since(at)).unwrap_or_default();
            tokio::time::Instant::now() + wait + TIME_MARGIN
        });
        if format.is_table() && style.width.is_some() {
            output::write_text(&output::control(output::Control::ClearScreen))?;
        }
        output::print(format, &explanations, |columns| {
            let stamp = style.paint(Colour::Dim, &format!("as of {}", at.strftime("%H:%M:%S")));
            format!(
                "{}{stamp}\n",
                render::status(&explanations, all_namespaces, namespace, columns, style)
            )
        })?;
        // Wait for a change or for time to change the answer, then let a burst of
        // changes settle before drawing again.
        let timer = async {
            match by_time {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            change = changes.next() => match change {
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(Failure::could_not_tell(format!("lost the watch: {e}"))),
                None => return Err(Failure::could_not_tell("the watch ended")),
            },
            () = timer => continue,
            () = &mut interrupted => return Ok(exit::OK),
        }
        let settle = tokio::time::sleep(Duration::from_millis(250));
        tokio::pin!(settle);
        loop {
            tokio::select! {
                () = &mut settle => break,
                change = changes.next() => if let Some(Err(e)) = change {
                    return Err(Failure::could_not_tell(format!("lost the watch: {e}")));
                },
            }
        }
    }
}

/// Ctrl-C, as a future that completes when it is pressed.
type Interrupt = Pin<Box<futures::future::Fuse<BoxFuture<'static, ()>>>>;

/// Ctrl-C, listened for from this moment on and for as long as the future lives: it
/// is polled once here, which installs the handler, so an interrupt between now and
/// the first `select!` is not missed (nor, between two of them, dropped). Never
/// completes when no handler can be installed.
fn interrupt() -> Interrupt {
    let mut interrupted = Box::pin(
        async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        .boxed()
        .fuse(),
    );
    let _ = interrupted.as_mut().now_or_never();
    interrupted
}

/// Follows a crossing until it lands (0), does not (6), or we stop knowing (2): each
/// step printed once as it settles, and on a terminal a live line for the step under
/// way.
async fn watch_crossing(
    ops: &Ops,
    ns: &str,
    passage: &Passage,
    timeout: Option<Duration>,
    mut interrupted: Interrupt,
    style: &Style,
) -> Result<u8, Failure> {
    let name = passage.name_any();
    let (gate, bundle) = (passage.spec.gate.clone(), passage.spec.bundle.clone());
    let explain_hint = style
        .invocation
        .rewrite(&format!("hecate explain {gate} -n {ns}"));
    let mut updates = Box::pin(ops.follow_passage(ns, &name));
    let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
    let mut announced = 0;
    let mut live = false;
    loop {
        let next = async {
            match deadline {
                Some(deadline) => tokio::time::timeout_at(deadline, updates.next()).await.ok(),
                None => Some(updates.next().await),
            }
        };
        let update = tokio::select! {
            update = next => update,
            () = &mut interrupted => {
                clear_live(&mut live, style)?;
                output::write_text(&format!("\nstopped watching; {name} is still crossing\n"))?;
                return Ok(exit::COULD_NOT_TELL);
            }
        };
        let current = match update {
            None => {
                clear_live(&mut live, style)?;
                let waited = timeout
                    .map(|t| format!("{}s", t.as_secs()))
                    .unwrap_or_default();
                output::write_text(&format!(
                    "\nstill crossing after {waited}: {name}\n  {explain_hint}\n"
                ))?;
                return Ok(exit::COULD_NOT_TELL);
            }
            Some(None) => {
                return Err(Failure::could_not_tell(format!(
                    "the watch of {name} ended"
                )));
            }
            Some(Some(Err(e))) if e.is_not_found() => {
                clear_live(&mut live, style)?;
                return Err(Failure::could_not_tell(format!(
                    "{name} is gone — it may have been collected"
                )));
            }
            Some(Some(Err(e))) => {
                return Err(Failure::could_not_tell(format!(
                    "lost the watch of {name}: {e}"
                )));
            }
            Some(Some(Ok(current))) => current,
        };
        let status = current.status.clone().unwrap_or_default();
        let mut text = String::new();
        while let Some(step) = status
            .steps
            .get(announced)
            .filter(|s| s.phase.is_terminal())
        {
            let colour = match step.phase {
                StepPhase::Succeeded => Colour::Green,
                StepPhase::Failed => Colour::Red,
                _ => Colour::Yellow,
            };
            let phase = format!("{:<10}", step.phase.as_str());
            let line = format!(
                "  {:<16} {} {}",
                step.uses,
                style.paint(colour, &phase),
                step.message
            );
            text.push_str(line.trim_end());
            text.push('\n');
            announced += 1;
        }
        if !text.is_empty() {
            clear_live(&mut live, style)?;
            output::write_text(&text)?;
        }
        let phase = current.phase();
        if phase.is_terminal() {
            clear_live(&mut live, style)?;
            return match phase {
                PassagePhase::Succeeded => {
                    output::write_text(&format!(
                        "\n{bundle} {}\n",
                        style.paint(Colour::Green, &format!("crossed {gate}"))
                    ))?;
                    Ok(exit::OK)
                }
                PassagePhase::Aborted => {
                    output::write_text(&format!(
                        "\n{} crossing {bundle} through {gate}\n",
                        style.paint(Colour::Yellow, "aborted")
                    ))?;
                    Ok(exit::CROSSING_FAILED)
                }
                _ => {
                    let message = if status.message.is_empty() {
                        "no reason recorded"
                    } else {
                        &status.message
                    };
                    output::write_text(&format!(
                        "\n{bundle} {} {gate}: {message}\n  {explain_hint}\n",
                        style.paint(Colour::Red, "did not cross")
                    ))?;
                    Ok(exit::CROSSING_FAILED)
                }
            };
        }
        if style.width.is_some() {
            let running = status.steps.iter().find(|s| s.phase == StepPhase::Running);
            let line = match running {
                Some(step) if step.message.is_empty() => format!("… {}", step.uses),
                Some(step) => format!("… {}: {}", step.uses, step.message),
                None => format!("… {} {}", name, phase.as_str().to_lowercase()),
            };
            let width = style.width.unwrap_or(80).saturating_sub(1);
            // Cut as shown, escapes and all, so the live line stays one line.
            let line = output::one_line(&line);
            output::write_text(&format!(
                "{}{}",
                output::control(output::Control::ClearLine),
                line.chars().take(width).collect::<String>()
            ))?;
            live = true;
        }
    }
}

fn clear_live(live: &mut bool, style: &Style) -> Result<(), Failure> {
    if std::mem::take(live) && style.width.is_some() {
        output::write_text(&output::control(output::Control::ClearLine))?;
    }
    Ok(())
}

/// Waits until the Beacon echoes our token in `status.lastHandledReconcileAt`.
async fn wait_for_poll(
    ops: &Ops,
    ns: &str,
    beacon: &str,
    token: &str,
    timeout: Option<Duration>,
) -> Result<u8, Failure> {
    let mut updates = Box::pin(ops.follow_beacon(ns, beacon));
    let wait = async {
        while let Some(update) = updates.next().await {
            let current = update.map_err(|e| {
                Failure::could_not_tell(format!("lost the watch of Beacon {beacon}: {e}"))
            })?;
            if current
                .status
                .as_ref()
                .is_some_and(|s| s.last_handled_reconcile_at == token)
            {
                let latest = current.status.map(|s| s.latest_bundle).unwrap_or_default();
                output::write_text(&format!(
                    "{beacon} has looked; latest Bundle: {}\n",
                    if latest.is_empty() { "-" } else { &latest }
                ))?;
                return Ok(exit::OK);
            }
        }
        Err(Failure::could_not_tell(format!(
            "the watch of Beacon {beacon} ended"
        )))
    };
    match timeout {
        Some(timeout) => tokio::time::timeout(timeout, wait)
            .await
            .unwrap_or_else(|_| {
                Err(Failure::could_not_tell(format!(
                    "{beacon} had not looked after {}s",
                    timeout.as_secs()
                )))
            }),
        None => wait.await,
    }
}

/// `hecate verify`: checks each recorded chain with Fides; the exit code is the worst
/// finding (ops decides which that is).
async fn verify(
    cluster: &crate::cli::ClusterArgs,
    args: crate::cli::VerifyArgs,
    style: &Style,
) -> Result<u8, Failure> {
    use hecate_ops::ChainState;
    use hecate_ops::{FidesClient as Client, FidesConfig as Config};
    let crate::cli::VerifyArgs {
        bundle,
        trail,
        server,
        token,
        all_namespaces,
        output,
    } = args;
    let format = output.format;
    let config = Config {
        base_url: server.unwrap_or_default(),
        token: token.unwrap_or_default(),
        timeout: None,
    };
    let fides = Client::new(&config).map_err(|e| {
        Failure::usage(format!(
            "{e}: give --server and --token, or set FIDES_SERVER_URL and FIDES_TOKEN"
        ))
    })?;
    let (reports, subject) = match (bundle, trail) {
        (_, Some(trail)) => (vec![Ops::verify_trail(&trail, &fides).await], trail),
        (Some(bundle), None) => {
            let cx = Context::connect(cluster).await?;
            let namespace = (!all_namespaces).then(|| cx.namespace.clone());
            let reports = Ops::new(cx.client.clone())
                .with_fides_server(cluster.fides_server.clone().unwrap_or_default())
                .verify_bundle(namespace.as_deref(), &bundle, &fides)
                .await
                .map_err(|e| Failure::from_ops(&cx.server, Mode::Read, e))?;
            (reports, bundle)
        }
        (None, None) => return Err(Failure::usage("verify needs a Bundle or --trail")),
    };
    // Its text is no table: wide prints it as it is.
    output::print(&format, &reports, |_| {
        render::verify(&reports, &subject, style)
    })?;
    Ok(match hecate_ops::rules::verify::overall(&reports) {
        ChainState::Valid => exit::OK,
        ChainState::NothingRecorded => exit::NOTHING_RECORDED,
        ChainState::CouldNotCheck => exit::COULD_NOT_TELL,
        ChainState::Broken => exit::CHAIN_BROKEN,
    })
}

/// `hecate flux suspend|resume|reconcile <gate> <kind>/<name>`.
async fn flux_action(
    ops: &Ops,
    cx: &Context,
    ns: &str,
    action: FluxAction,
    write: impl Fn(hecate_ops::Error) -> Failure,
) -> Result<u8, Failure> {
    let (suspend, target) = match action {
        FluxAction::Suspend(target) => (Some(true), target),
        FluxAction::Resume(target) => (Some(false), target),
        FluxAction::Reconcile(target) => (None, target),
    };
    let Some((kind, name)) = target.object.split_once('/').filter(|(kind, name)| {
        hecate_ops::rules::flux_watch::is_kind(kind) && !name.is_empty() && !name.contains('/')
    }) else {
        return Err(Failure::usage(format!(
            "{} is not KIND/NAME (e.g. Kustomization/podinfo)",
            target.object
        )));
    };
    let format = target.output.format;
    match suspend {
        Some(suspend) => {
            let actor = cx.whoami().await?;
            let answer = ops
                .set_flux_suspend(ns, &target.gate, kind, name, suspend, &actor.name)
                .await
                .map_err(write)?;
            let written = Written {
                action: if suspend { "suspend" } else { "resume" },
                answer: &answer,
            };
            output::print(&format, &written, |_| render::flux_suspended(&answer))?;
        }
        None => {
            let answer = ops
                .reconcile_flux(ns, &target.gate, kind, name)
                .await
                .map_err(write)?;
            let written = Written {
                action: "reconcile",
                answer: &answer,
            };
            output::print(&format, &written, |_| render::flux_reconciled(&answer))?;
        }
    }
    Ok(exit::OK)
}
