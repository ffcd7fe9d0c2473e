//! `cargo xtask control-plane build|start|stop|status`: a local cluster for people
//! and scripts, kept in `target/hecate-dev/`: etcd and kube-apiserver, with
//! kube-controller-manager, kube-scheduler and kwok so workloads run, and Flux's own
//! source-controller and kustomize-controller.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Subcommand;
use hecate_testenv::{Binaries, ControlPlane, Endpoint, Identity, Lifetime, Parts, programs};

#[derive(Subcommand)]
pub(crate) enum Action {
    /// Find or build the cluster's programs (once per machine), and say where they are.
    Build,
    /// Start a control plane in the background and write kubeconfigs for each identity.
    Start,
    /// Stop the running control plane.
    Stop,
    /// Say whether a control plane is running, and how to reach it.
    Status,
}

/// Where the development control plane keeps its state, data and kubeconfigs.
pub(crate) fn dev_dir(root: &Path) -> PathBuf {
    root.join("target/hecate-dev")
}

pub(crate) fn run(root: &Path, action: Action) -> anyhow::Result<()> {
    let dir = dev_dir(root);
    match action {
        Action::Build => {
            let binaries = Binaries::locate_or_build()?.with_workloads()?;
            println!("etcd:                    {}", binaries.etcd.display());
            println!(
                "kube-apiserver:          {}",
                binaries.kube_apiserver.display()
            );
            println!(
                "kube-controller-manager: {}",
                binaries.kube_controller_manager.display()
            );
            println!(
                "kube-scheduler:          {}",
                binaries.kube_scheduler.display()
            );
            for program in programs::ALL {
                let built = program.locate_or_build()?;
                println!(
                    "{:<24} {} ({})",
                    format!("{}:", program.name),
                    built.binary.display(),
                    program.version
                );
            }
        }
        Action::Start => {
            let endpoint = start(&dir)?;
            print_endpoint(root, &endpoint);
            println!("\nStop it with: cargo xtask control-plane stop");
        }
        Action::Stop => {
            if ControlPlane::stop_detached(&dir)? {
                println!("stopped the control plane in {}", dir.display());
            } else {
                println!("no control plane was running in {}", dir.display());
            }
        }
        Action::Status => match ControlPlane::find_detached(&dir) {
            Some(endpoint) => print_endpoint(root, &endpoint),
            None => println!(
                "no control plane is running (start one with: cargo xtask control-plane start)"
            ),
        },
    }
    Ok(())
}

/// The running development control plane, or a new one: started detached, with fresh
/// kubeconfigs.
pub(crate) fn start(dir: &Path) -> anyhow::Result<Endpoint> {
    if let Some(endpoint) = ControlPlane::find_detached(dir) {
        eprintln!("[control-plane] already running at {}", endpoint.server);
        return Ok(endpoint);
    }
    // A stale state file from a control plane that died: clear it first.
    ControlPlane::stop_detached(dir)?;
    let binaries = Binaries::locate_or_build()?;
    let plane = ControlPlane::start_parts(&binaries, dir, Lifetime::Detached, Parts::WITH_FLUX)?;
    let endpoint = plane.endpoint().clone();
    endpoint
        .write_kubeconfigs(dir)
        .context("writing kubeconfigs")?;
    Ok(endpoint)
}

fn print_endpoint(root: &Path, endpoint: &Endpoint) {
    let dir = endpoint.dir.strip_prefix(root).unwrap_or(&endpoint.dir);
    let parts = if endpoint.parts.flux {
        "etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, Flux's \
         source-controller and kustomize-controller"
    } else {
        "etcd and kube-apiserver"
    };
    println!(
        "control plane: {} ({parts}; pids {:?})",
        endpoint.server, endpoint.pids
    );
    println!(
        "kubeconfig:    {}/kubeconfig (admin; contexts for every identity)",
        dir.display()
    );
    let names: Vec<&str> = Identity::ALL.iter().map(|who| who.username()).collect();
    println!(
        "per identity:  {}/kubeconfig-{{{}}}",
        dir.display(),
        names.join(",")
    );
    println!(
        "\n  export KUBECONFIG={}/kubeconfig",
        endpoint.dir.display()
    );
}
