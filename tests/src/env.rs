//! [`TestEnv`]: what one test gets — the test binary's shared control plane, a fresh
//! namespace of its own, and helpers to create fixtures and write their status.

use std::fmt::Debug;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::core::object::HasStatus;
use kube::{Resource, ResourceExt as _};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::binaries::Binaries;
use crate::control_plane::{ControlPlane, Endpoint, FIELD_MANAGER, Lifetime, Parts};
use crate::identity::Identity;

/// The control plane every test of this test binary shares, started on first use and
/// stopped when the binary exits (see [`Lifetime::ThisProcess`]).
static SHARED: OnceLock<Result<ControlPlane, String>> = OnceLock::new();
/// The cluster with workloads and Flux's own controllers that the tests of this test
/// binary asking for it share (see [`TestEnv::with_flux`]).
static SHARED_WITH_FLUX: OnceLock<Result<ControlPlane, String>> = OnceLock::new();

/// One test's view of the cluster: the shared control plane, a namespace no other test
/// uses, and an admin client.
#[derive(Clone)]
pub struct TestEnv {
    /// This test's namespace.
    pub namespace: String,
    /// A client as `admin` (`system:masters`).
    pub admin: kube::Client,
    endpoint: &'static Endpoint,
}

impl TestEnv {
    /// The shared control plane (started — and on first use ever, built — if this is
    /// the binary's first test to ask) and a new namespace. Panics with the reason
    /// when there is no control plane to be had: a test that cannot reach its cluster
    /// must fail, not pass.
    pub async fn new() -> Self {
        // Started off the caller's runtime, so a test that joins this with the start
        // of something else (`Clusters::shared`) starts both at once.
        Self::on(off_runtime(Self::shared_endpoint).await).await
    }

    /// A control plane of one test's own, kube-apiserver started with `extra` flags,
    /// in a directory named after `name` and this process and stopped with it, and a
    /// new namespace there ([`TestEnv::on`]): for the test that changes what is
    /// cluster-wide or runs a cluster unlike the shared one. Panics as
    /// [`TestEnv::new`] does.
    pub async fn on_own_plane(name: &str, extra: &[String]) -> (ControlPlane, Self) {
        let dir = std::env::temp_dir().join(format!("hecate-{name}-{}", std::process::id()));
        let extra = extra.to_vec();
        let plane = tokio::task::spawn_blocking(move || {
            let binaries = Binaries::locate_or_build()?;
            ControlPlane::start_with(&binaries, &dir, Lifetime::ThisProcess, &extra)
        })
        .await
        .expect("starting a control plane of the test's own")
        .unwrap_or_else(|error| panic!("a control plane of the test's own: {error:#}"));
        let endpoint: &'static Endpoint = Box::leak(Box::new(plane.endpoint().clone()));
        (plane, Self::on(endpoint).await)
    }

    /// A new namespace on another control plane than the shared one: for the rare
    /// test that changes what is cluster-wide (a CRD), which would disturb every
    /// other test of the binary on the shared one. Panics as [`TestEnv::new`] does.
    pub async fn on(endpoint: &'static Endpoint) -> Self {
        let admin = endpoint
            .client(Identity::Admin)
            .await
            .expect("a client as admin");
        let namespace = unique_namespace_name();
        let object = Namespace {
            metadata: ObjectMeta {
                name: Some(namespace.clone()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        Api::<Namespace>::all(admin.clone())
            .create(&PostParams::default(), &object)
            .await
            .expect("creating the test's namespace");
        Self {
            namespace,
            admin,
            endpoint,
        }
    }

    /// The shared control plane's endpoint, starting it if need be.
    pub fn shared_endpoint() -> &'static Endpoint {
        let plane = SHARED.get_or_init(|| {
            let dir =
                std::env::temp_dir().join(format!("hecate-control-plane-{}", std::process::id()));
            Binaries::locate_or_build()
                .and_then(|binaries| ControlPlane::start(&binaries, &dir, Lifetime::ThisProcess))
                .map_err(|e| format!("{e:#}"))
        });
        match plane {
            Ok(plane) => plane.endpoint(),
            Err(error) => panic!("no test control plane: {error}"),
        }
    }

    /// A new namespace on the test binary's shared cluster that runs workloads and
    /// Flux's own controllers ([`Parts::WITH_FLUX`]), started on first use (and, on
    /// first use ever, built). Real Flux CRDs are installed there, so stand-ins
    /// ([`crate::flux`]) never are. Panics as [`TestEnv::new`] does.
    pub async fn with_flux() -> Self {
        let plane = off_runtime(|| {
            SHARED_WITH_FLUX.get_or_init(|| {
                let dir =
                    std::env::temp_dir().join(format!("hecate-cluster-{}", std::process::id()));
                Binaries::locate_or_build()
                    .and_then(|binaries| {
                        ControlPlane::start_parts(
                            &binaries,
                            &dir,
                            Lifetime::ThisProcess,
                            Parts::WITH_FLUX,
                        )
                    })
                    .map_err(|e| format!("{e:#}"))
            })
        })
        .await;
        match plane {
            Ok(plane) => Self::on(plane.endpoint()).await,
            Err(error) => panic!("no test cluster with Flux: {error}"),
        }
    }

    /// How to reach the control plane (its URL, CA and tokens).
    pub fn endpoint(&self) -> &'static Endpoint {
        self.endpoint
    }

    /// A client that authenticates as `who`.
    pub async fn client(&self, who: Identity) -> kube::Client {
        self.endpoint
            .client(who)
            .await
            .expect("a client for a known identity")
    }

    /// An `Api` for `K` in this test's namespace, as admin.
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.admin.clone(), &self.namespace)
    }

    /// Creates `object` in this test's namespace (whatever namespace it names) and
    /// returns it as stored. Its status, if any, is not written: the API server ignores
    /// status on create; use [`TestEnv::write_status`].
    pub async fn create<K>(&self, mut object: K) -> K
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
            + Clone
            + Debug
            + Serialize
            + DeserializeOwned,
    {
        object.meta_mut().namespace = Some(self.namespace.clone());
        self.api::<K>()
            .create(&PostParams::default(), &object)
            .await
            .unwrap_or_else(|e| panic!("creating {} {}: {e}", K::kind(&()), object.name_any()))
    }

    /// Creates `gate` with its first step's `with` wrapped `depth` maps deep: what the
    /// API server stores and no reader decodes past about 120 levels (issue 30). The
    /// answer is not decoded (it would not decode); [`TestEnv::delete_gate_unread`]
    /// removes it. Other tests share the cluster: delete it before the test ends.
    pub async fn create_deep_gate(&self, mut gate: hecate_types::Gate, depth: usize) {
        let mut with = serde_json::json!("deep");
        for _ in 0..depth {
            with = serde_json::json!({ "a": with });
        }
        gate.metadata.namespace = Some(self.namespace.clone());
        let mut body = serde_json::to_value(&gate).expect("a Gate serialises");
        body["spec"]["passage"]["steps"][0]["with"] = with;
        let request =
            kube::core::Request::new(hecate_types::Gate::url_path(&(), Some(&self.namespace)))
                .create(
                    &PostParams::default(),
                    serde_json::to_vec(&body).expect("JSON serialises"),
                )
                .expect("a create request");
        self.admin
            .request_text(request)
            .await
            .unwrap_or_else(|e| panic!("creating Gate {}: {e}", gate.name_any()));
    }

    /// Deletes Gate `name` without decoding the answer (see [`TestEnv::create_deep_gate`]).
    pub async fn delete_gate_unread(&self, name: &str) {
        let request =
            kube::core::Request::new(hecate_types::Gate::url_path(&(), Some(&self.namespace)))
                .delete(name, &kube::api::DeleteParams::default())
                .expect("a delete request");
        self.admin
            .request_text(request)
            .await
            .unwrap_or_else(|e| panic!("deleting Gate {name}: {e}"));
    }

    /// Writes `object`'s status through the status subresource, as a controller would,
    /// and returns the object as stored.
    pub async fn write_status<K>(&self, object: &K) -> K
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
            + HasStatus
            + Clone
            + Debug
            + Serialize
            + DeserializeOwned,
        K::Status: Serialize,
    {
        let name = object.name_any();
        let patch = serde_json::json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "status": object.status(),
        });
        self.api::<K>()
            .patch_status(
                &name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(patch),
            )
            .await
            .unwrap_or_else(|e| panic!("writing the status of {} {name}: {e}", K::kind(&())))
    }

    /// Lets `who` use `verbs` on `resources` (plural names) of `hecate.dev` in this
    /// test's namespace, through a Role and RoleBinding named after them.
    pub async fn grant(&self, who: Identity, verbs: &[&str], resources: &[&str]) {
        let name = format!("{}-{}", who.username(), verbs.join("-"));
        let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let role = Role {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            rules: Some(vec![PolicyRule {
                api_groups: Some(vec![hecate_types::GROUP.to_string()]),
                resources: Some(strings(resources)),
                verbs: strings(verbs),
                ..PolicyRule::default()
            }]),
        };
        let binding = RoleBinding {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "Role".into(),
                name,
            },
            subjects: Some(vec![Subject {
                api_group: Some("rbac.authorization.k8s.io".into()),
                kind: "User".into(),
                name: who.username().into(),
                ..Subject::default()
            }]),
        };
        self.create(role).await;
        self.create(binding).await;
    }
}

/// Applies every object of a multi-document YAML manifest with server-side apply, as
/// admin — or, with `dry_run`, only asks the API server whether it would accept them.
/// Returns the objects as the API server answered.
pub async fn apply_manifest(
    client: &kube::Client,
    yaml: &str,
    dry_run: bool,
) -> anyhow::Result<Vec<kube::api::DynamicObject>> {
    use serde::Deserialize as _;
    let mut applied = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(yaml) {
        let value = serde_json::Value::deserialize(document)?;
        if value.is_null() {
            continue;
        }
        let object: kube::api::DynamicObject = serde_json::from_value(value.clone())?;
        let types = object
            .types
            .clone()
            .ok_or_else(|| anyhow::anyhow!("an object without apiVersion/kind"))?;
        let gvk = kube::core::GroupVersionKind::try_from(&types)?;
        let (resource, capabilities) = kube::discovery::pinned_kind(client, &gvk).await?;
        let api: Api<kube::api::DynamicObject> =
            match (capabilities.scope, object.metadata.namespace.as_deref()) {
                (kube::discovery::Scope::Namespaced, Some(namespace)) => {
                    Api::namespaced_with(client.clone(), namespace, &resource)
                }
                (kube::discovery::Scope::Namespaced, None) => {
                    Api::default_namespaced_with(client.clone(), &resource)
                }
                (kube::discovery::Scope::Cluster, _) => Api::all_with(client.clone(), &resource),
            };
        let mut params = PatchParams::apply(FIELD_MANAGER).force();
        params.dry_run = dry_run;
        let name = object.metadata.name.clone().unwrap_or_default();
        applied.push(
            api.patch(&name, &params, &Patch::Apply(&value))
                .await
                .map_err(|e| anyhow::anyhow!("applying {} {name}: {e}", types.kind))?,
        );
    }
    Ok(applied)
}

/// What `start` returns, computed on tokio's blocking threads, so the caller's runtime
/// goes on with what it joined this with (another control plane's start); `start`'s
/// panic is the caller's.
pub(crate) async fn off_runtime<T: Send + 'static>(
    start: impl FnOnce() -> T + Send + 'static,
) -> T {
    match tokio::task::spawn_blocking(start).await {
        Ok(value) => value,
        Err(failed) => match failed.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(failed) => panic!("starting a control plane: {failed}"),
        },
    }
}

/// `t-<pid>-<n>`: unique within the control plane, which lives no longer than this
/// process.
fn unique_namespace_name() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "t-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
