//! The test environment: a real Kubernetes control plane — `kube-apiserver` and `etcd`,
//! never a mock — for every test that talks to Kubernetes, and for people through
//! `cargo xtask control-plane`.
//!
//! - [`Binaries`] finds `etcd` and `kube-apiserver` in `KUBEBUILDER_ASSETS`, or builds
//!   them once with Go from the published modules into a cache outside the repository.
//! - [`Tool`] finds `kustomize` and `helm` — the programs the controller's render
//!   steps run — or builds them once the same way, into the same cache.
//! - [`ControlPlane`] starts them on loopback with a generated CA and serving
//!   certificate, RBAC authorisation, a static token per [`Identity`] and a
//!   service-account signing key; waits for `/readyz`; installs the Hecate CRDs and
//!   waits until they are Established. Its processes never outlive their owner. Its
//!   kube-apiserver can be stopped, paused and started again mid-test, for faults.
//! - [`TestEnv`] is what a test uses: one control plane per test binary, a fresh
//!   namespace per test, a client per identity, and fixture helpers that create objects
//!   and write their status subresource the way a controller does.
//!
//! ```no_run
//! # async fn example() {
//! use hecate_testenv::{Identity, TestEnv};
//! let env = TestEnv::new().await;
//! let alice = env.client(Identity::Alice).await;
//! # }
//! ```
//!
//! - [`clusters`] starts further clusters, each a control plane of its own with
//!   workloads and Flux's own controllers, all at once — shared by a test binary's
//!   tests, or a test's own to stop and restart — and connects them to a namespace as
//!   Settings' "connect cluster" does: for what spans clusters (fan-out, remote Flux
//!   objects).
//! - [`fleet`] is an application and its fleet repository (a branch per environment)
//!   with the Flux objects that deploy it: what the end-to-end tests, the demo and the
//!   bench deploy on Flux's own controllers.
//! - [`fixtures`] creates small objects (a Gate, a Bundle, a Passage with a status) for
//!   the crates' tests.
//! - [`flux`] installs stand-ins for Flux's CRDs, so tests can play Flux without it.
//! - [`rbac`] installs RBAC as `deploy/` ships it and grants people roles.
//! - [`chart`] renders the Helm chart (`charts/hecate`) with the real `helm`, and
//!   makes `deploy/` from it.
//! - [`registry`] runs a real OCI registry (CNCF Distribution) on loopback, with or
//!   without authentication, and writes content to it by raw HTTP.
//! - [`https`] runs a small HTTPS server on loopback with a CA of its own, answering
//!   with the test's handler and keeping what it was asked.
//! - [`oidc`] runs an OpenID Connect provider on that server (discovery, JWKS,
//!   RS256 ID tokens, a sign-in that needs no person), doing wrong on request.
//! - [`git_http`] serves a directory of bare git repositories over git's smart HTTP
//!   protocol on loopback, through the real `git http-backend`, pushes allowed.
//! - [`sshd`] runs a real SSH server (OpenSSH) on loopback as the tests' own user, for
//!   git over SSH with keys the tests generate.
//! - [`demo`] loads the demo pipeline (`shop`: dev → staging → production, with
//!   history) for `cargo xtask demo` and for tests that want a realistic namespace.
//!
//! The crate's own integration tests (`tests/tests/`) check the environment itself:
//! real round-trips, schema validation, RBAC and identities, and clean-up.

mod binaries;
pub mod chart;
mod cluster;
pub mod clusters;
mod control_plane;
pub mod demo;
mod env;
pub mod fides;
pub mod fixtures;
pub mod fleet;
pub mod flux;
pub mod git_http;
mod go;
pub mod https;
mod identity;
pub mod oidc;
mod pki;
pub mod programs;
pub mod rbac;
pub mod registry;
pub mod schemathesis;
pub mod sshd;
mod tools;
pub mod world;

pub use binaries::{Binaries, ETCD_VERSION, KUBERNETES_VERSION, cache_dir};
pub use cluster::NODE;
pub use control_plane::{
    ControlPlane, Endpoint, Lifetime, Parts, RequestLog, install_crd_files, install_crds,
};
pub use env::{TestEnv, apply_manifest};
pub use identity::{Identity, RELEASE_MANAGERS};
pub use tools::{HELM_VERSION, KUSTOMIZE_VERSION, Tool};
