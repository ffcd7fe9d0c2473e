//! [`Ops`]: the thin shell that fetches snapshots from Kubernetes and hands them to
//! the rules.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hecate_types::lenient::Lenient;
use hecate_types::{Beacon, Bundle, Gate, Passage};
use jiff::Timestamp;
use k8s_openapi::NamespaceResourceScope;
use kube::api::{Api, ListParams};
use kube::{Resource, ResourceExt as _};
use serde::de::DeserializeOwned;

use crate::cache::Cache;
use crate::error::{Error, Kind, Result};
use crate::model::{
    BundleDiff, Explanation, GateTargets, Overview, Person, QueuedApproval, StagedGate,
    YourCrossings,
};
pub use crate::rules::diff::DiffAgainst;
use crate::rules::eligibility::newest_first;
use crate::rules::{self, NamespaceSnapshot};

/// A clock; tests freeze it.
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// Which namespaces an [`Ops::overview`] covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every namespace the client may read.
    All,
    /// These namespaces only (e.g. the ones a caller of the API server may read).
    Namespaces(Vec<String>),
}

/// Explanations judged at one instant, and how long time alone leaves them standing
/// ([`Ops::explanations_until`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TimedExplanations {
    /// As [`Ops::explanations`] answers.
    pub explanations: Vec<Explanation>,
    /// The instant they were judged at (the [`Ops`] clock).
    pub at: Timestamp,
    /// The earliest instant after `at` at which one of them would read differently
    /// with no object changed; `None`: none changes with time.
    pub unchanged_until: Option<Timestamp>,
}

/// Answers questions about, and performs actions on, the Hecate objects in a cluster.
///
/// Each call fetches what it needs in a bounded number of requests — at most one LIST
/// or GET per kind, never one per object — and judges it with [`crate::rules`].
/// Reads return the API types themselves; only answers that carry derived information
/// (an [`Explanation`], an [`Overview`]) have shapes of their own.
#[derive(Clone)]
pub struct Ops {
    client: kube::Client,
    clock: Clock,
    fides_server: String,
    kubeconfig_exec: crate::kubeconfig::Exec,
    cache: Option<Cache>,
    /// Which kinds' field selectors the API server has refused: the cluster's CRD
    /// lacks the `selectableFields` ours declares (the reference's do), so that kind
    /// is listed whole from then on.
    selectors_refused: Arc<SelectorsRefused>,
}

/// Set once the API server has refused a field selector on the kind.
#[derive(Default)]
struct SelectorsRefused {
    passages: AtomicBool,
    bundles: AtomicBool,
}

pub(crate) fn not_found(kind: Kind, namespace: &str, name: &str) -> Error {
    Error::NotFound {
        kind,
        namespace: namespace.into(),
        name: name.into(),
    }
}

impl Ops {
    /// Ops over `client`, with the wall clock and no default Fides server (see
    /// [`Ops::with_fides_server`]). Ops reads no environment: its binaries do, at
    /// their edge.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), kube::Error> {
    /// // As kubectl connects: KUBECONFIG, ~/.kube/config, or the pod's service account.
    /// let ops = hecate_ops::Ops::new(kube::Client::try_default().await?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            clock: Arc::new(Timestamp::now),
            fides_server: String::new(),
            kubeconfig_exec: crate::kubeconfig::Exec::Refused,
            cache: None,
            selectors_refused: Arc::default(),
        }
    }

    /// The same Ops answering reads from `cache` instead of the API server, once the
    /// cache has listed everything (before that, reads go to the API server). Writes
    /// always read what they judge from the API server.
    #[must_use]
    pub fn with_cache(mut self, cache: Cache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The same Ops with a default Fides server, for Gates whose `evidence.serverURL`
    /// is empty. Every binary takes it as `--fides-server`, defaulting to
    /// `FIDES_SERVER_URL` — the variable the controller reads, so every surface finds
    /// the same Fides.
    #[must_use]
    pub fn with_fides_server(mut self, server: impl Into<String>) -> Self {
        self.fides_server = server.into();
        self
    }

    pub(crate) fn fides_server(&self) -> &str {
        &self.fides_server
    }

    /// The same Ops running kubeconfigs' `exec` plugins where `exec` allows it, for
    /// Settings' probe of connected clusters — as the controller does under the same
    /// operator flag (`--insecure-kubeconfig-exec`, DECISION 160), so both say the same
    /// of a cluster.
    #[must_use]
    pub fn with_kubeconfig_exec(mut self, exec: crate::kubeconfig::Exec) -> Self {
        self.kubeconfig_exec = exec;
        self
    }

    pub(crate) fn kubeconfig_exec(&self) -> crate::kubeconfig::Exec {
        self.kubeconfig_exec
    }

    /// The same Ops with another clock (tests freeze time with this).
    #[must_use]
    pub fn with_clock(mut self, clock: impl Fn() -> Timestamp + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The cache to read from: none, or one that has not listed everything yet.
    pub(crate) fn cache(&self) -> Option<&Cache> {
        self.cache.as_ref().filter(|cache| cache.is_ready())
    }

    /// The client this Ops talks through.
    pub(crate) fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// What the clock says now.
    pub fn now(&self) -> Timestamp {
        (self.clock)()
    }

    pub(crate) fn api<K>(&self, namespace: &str) -> Api<K>
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// One object by name, or [`Error::NotFound`].
    pub(crate) async fn get<K>(&self, kind: Kind, namespace: &str, name: &str) -> Result<K>
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
            + Clone
            + Debug
            + DeserializeOwned,
    {
        self.api::<K>(namespace)
            .get_opt(name)
            .await
            .map_err(Error::kubernetes(format!("reading {kind} {name}")))?
            .map(without_managed_fields)
            .ok_or_else(|| Error::NotFound {
                kind,
                namespace: namespace.into(),
                name: name.into(),
            })
    }

    /// Every object of a kind in `namespace` (or in every namespace), in one LIST.
    pub(crate) async fn list<K>(&self, kind: Kind, namespace: Option<&str>) -> Result<Vec<K>>
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
            + Clone
            + Debug
            + DeserializeOwned,
    {
        let api = match namespace {
            Some(namespace) => self.api::<Lenient<K>>(namespace),
            None => Api::all(self.client.clone()),
        };
        let list = api
            .list(&ListParams::default())
            .await
            .map_err(Error::kubernetes(format!("listing {kind}s")))?;
        Ok(decoded(kind, list.items))
    }

    /// The objects of `kind` in `namespace` whose `fields` have the values given, in
    /// one LIST: selected by the API server where the CRD declares those fields
    /// selectable, else every object of the namespace — a cluster running the
    /// reference's CRDs answers the selector with 400, which `refused` remembers.
    /// Either way only the objects `keep` accepts are returned: a selector is a
    /// request, the rule is ours, and the answer is the same on both paths.
    async fn list_selected<K>(
        &self,
        kind: Kind,
        namespace: &str,
        fields: &[(&str, &str)],
        refused: &AtomicBool,
        keep: impl Fn(&K) -> bool,
    ) -> Result<Vec<K>>
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
            + Clone
            + Debug
            + DeserializeOwned,
    {
        if !fields.is_empty() && !refused.load(Ordering::Relaxed) {
            let selector: Vec<String> = fields
                .iter()
                .map(|(field, value)| format!("{field}={value}"))
                .collect();
            let params = ListParams::default().fields(&selector.join(","));
            match self.api::<Lenient<K>>(namespace).list(&params).await {
                Ok(list) => {
                    let mut objects = decoded(kind, list.items);
                    objects.retain(|object| keep(object));
                    return Ok(objects);
                }
                // "field label not supported": the CRD has no selectableFields.
                Err(kube::Error::Api(status)) if status.code == 400 => {
                    refused.store(true, Ordering::Relaxed);
                }
                Err(source) => {
                    return Err(Error::Kubernetes {
                        context: format!("listing {kind}s"),
                        source,
                    });
                }
            }
        }
        let mut objects: Vec<K> = self.list(kind, Some(namespace)).await?;
        objects.retain(|object| keep(object));
        Ok(objects)
    }

    /// The Passages of `namespace` whose `spec.gate` / `spec.bundle` are the ones
    /// given, in one LIST ([`Ops::list_selected`]: the API server sends only those
    /// where the CRD allows it).
    pub(crate) async fn passages_matching(
        &self,
        namespace: &str,
        gate: Option<&str>,
        bundle: Option<&str>,
    ) -> Result<Vec<Passage>> {
        let fields: Vec<(&str, &str)> = [("spec.gate", gate), ("spec.bundle", bundle)]
            .into_iter()
            .filter_map(|(field, value)| Some((field, value?)))
            .collect();
        self.list_selected(
            Kind::Passage,
            namespace,
            &fields,
            &self.selectors_refused.passages,
            |p: &Passage| crosses(p, gate, bundle),
        )
        .await
    }

    /// The Bundles of `namespace` that `gate` admits — those from the Beacons its
    /// admissions name ([`rules::eligibility::admitted_beacons`]), the only ones
    /// eligibility (and so Explain) judges. One admitted Beacon: one LIST the API
    /// server narrows by `spec.beacon` where the CRD allows it; several: one LIST of
    /// the namespace's Bundles, filtered here (a field selector cannot say "one of");
    /// none: no request at all. A Beacon name no object could have (it would not be a
    /// valid selector either) is listed the second way. With a cache, no request.
    pub(crate) async fn bundles_admitted_by(
        &self,
        namespace: &str,
        gate: &Gate,
    ) -> Result<Vec<Bundle>> {
        let beacons = rules::eligibility::admitted_beacons(gate);
        if let Some(cache) = self.cache() {
            return Ok(cache
                .snapshot(namespace)
                .bundles()
                .filter(|b| beacons.contains(b.spec.beacon.as_str()))
                .cloned()
                .collect());
        }
        let fields: Vec<(&str, &str)> = match beacons.iter().collect::<Vec<_>>()[..] {
            [] => return Ok(Vec::new()),
            [beacon] if hecate_types::names::is_dns_subdomain(beacon) => {
                vec![("spec.beacon", *beacon)]
            }
            _ => Vec::new(),
        };
        self.list_selected(
            Kind::Bundle,
            namespace,
            &fields,
            &self.selectors_refused.bundles,
            |b: &Bundle| beacons.contains(b.spec.beacon.as_str()),
        )
        .await
    }

    /// The snapshot of `namespace`: from the cache, or three LISTs.
    async fn snapshot(&self, namespace: &str) -> Result<Arc<NamespaceSnapshot>> {
        if let Some(cache) = self.cache() {
            return Ok(cache.snapshot(namespace));
        }
        let (gates, bundles, passages) = futures::try_join!(
            self.list::<Gate>(Kind::Gate, Some(namespace)),
            self.list::<Bundle>(Kind::Bundle, Some(namespace)),
            self.list::<Passage>(Kind::Passage, Some(namespace)),
        )?;
        Ok(Arc::new(NamespaceSnapshot::new(
            namespace, gates, bundles, passages,
        )))
    }

    /// The Gates in `namespace`, by name: a surface that prints them twice prints them
    /// the same way.
    pub async fn gates(&self, namespace: &str) -> Result<Vec<Gate>> {
        if let Some(cache) = self.cache() {
            return Ok(cache.snapshot(namespace).gates().cloned().collect());
        }
        let mut gates: Vec<Gate> = self.list(Kind::Gate, Some(namespace)).await?;
        gates.sort_by_key(|g| g.name_any());
        Ok(gates)
    }

    /// The Gates in `namespace`, by name as [`Ops::gates`], each with its stage in
    /// the namespace's pipeline ([`rules::pipeline::stages`]): the plain list every
    /// surface shows. One request, or none from the cache.
    pub async fn staged_gates(&self, namespace: &str) -> Result<Vec<StagedGate>> {
        let gates = self.gates(namespace).await?;
        let mut stages = rules::pipeline::stages(&gates);
        Ok(gates
            .into_iter()
            .map(|gate| {
                let stage = stages.remove(&gate.name_any()).unwrap_or_default();
                StagedGate { gate, stage }
            })
            .collect())
    }

    /// One Gate.
    pub async fn gate(&self, namespace: &str, name: &str) -> Result<Gate> {
        match self.cache() {
            Some(cache) => cache
                .snapshot(namespace)
                .gate(name)
                .cloned()
                .ok_or_else(|| not_found(Kind::Gate, namespace, name)),
            None => self.get(Kind::Gate, namespace, name).await,
        }
    }

    /// The Bundles in `namespace`, newest first (ties by name): the question is nearly
    /// always about the recent ones.
    pub async fn bundles(&self, namespace: &str) -> Result<Vec<Bundle>> {
        if let Some(cache) = self.cache() {
            return Ok(cache.snapshot(namespace).bundles().cloned().collect());
        }
        let mut bundles: Vec<Bundle> = self.list(Kind::Bundle, Some(namespace)).await?;
        bundles.sort_by(newest_first);
        Ok(bundles)
    }

    /// One Bundle.
    pub async fn bundle(&self, namespace: &str, name: &str) -> Result<Bundle> {
        match self.cache() {
            Some(cache) => cache
                .snapshot(namespace)
                .bundles()
                .find(|b| b.metadata.name.as_deref() == Some(name))
                .cloned()
                .ok_or_else(|| not_found(Kind::Bundle, namespace, name)),
            None => self.get(Kind::Bundle, namespace, name).await,
        }
    }

    /// The Passages in `namespace`, newest first, keeping only those whose `spec.gate`
    /// and `spec.bundle` match the filters that are given.
    pub async fn passages(
        &self,
        namespace: &str,
        gate: Option<&str>,
        bundle: Option<&str>,
    ) -> Result<Vec<Passage>> {
        let keep = |p: &Passage| crosses(p, gate, bundle);
        if let Some(cache) = self.cache() {
            return Ok(cache
                .snapshot(namespace)
                .passages()
                .filter(|p| keep(p))
                .cloned()
                .collect());
        }
        let mut passages = self.passages_matching(namespace, gate, bundle).await?;
        passages.sort_by(crate::rules::eligibility::passages_newest_first);
        Ok(passages)
    }

    /// One Passage.
    pub async fn passage(&self, namespace: &str, name: &str) -> Result<Passage> {
        match self.cache() {
            Some(cache) => cache
                .snapshot(namespace)
                .passages()
                .find(|p| p.metadata.name.as_deref() == Some(name))
                .cloned()
                .ok_or_else(|| not_found(Kind::Passage, namespace, name)),
            None => self.get(Kind::Passage, namespace, name).await,
        }
    }

    /// The Beacons in `namespace`, by name.
    pub async fn beacons(&self, namespace: &str) -> Result<Vec<Beacon>> {
        let mut beacons: Vec<Beacon> = match self.cache() {
            Some(cache) => cache.beacons(namespace),
            None => self.list(Kind::Beacon, Some(namespace)).await?,
        };
        beacons.sort_by_key(|b| b.name_any());
        Ok(beacons)
    }

    /// One Beacon.
    pub async fn beacon(&self, namespace: &str, name: &str) -> Result<Beacon> {
        match self.cache() {
            Some(cache) => cache
                .beacons(namespace)
                .into_iter()
                .find(|b| b.metadata.name.as_deref() == Some(name))
                .ok_or_else(|| not_found(Kind::Beacon, namespace, name)),
            None => self.get(Kind::Beacon, namespace, name).await,
        }
    }

    /// The namespaces that hold something Hecate manages — not every namespace in the
    /// cluster. Gates and Beacons suffice (a Bundle lives in its Beacon's namespace, a
    /// Passage in its Gate's), and only their metadata is fetched. Sorted.
    ///
    /// This sees what the client may see; a server acting for others must still filter
    /// the result to what each caller may read.
    pub async fn namespaces(&self) -> Result<Vec<String>> {
        if let Some(cache) = self.cache() {
            return Ok(cache.namespaces());
        }
        let gates = Api::<Gate>::all(self.client.clone());
        let beacons = Api::<Beacon>::all(self.client.clone());
        let params = ListParams::default();
        let (gates, beacons) = futures::try_join!(
            async {
                gates
                    .list_metadata(&params)
                    .await
                    .map_err(Error::kubernetes("listing Gates"))
            },
            async {
                beacons
                    .list_metadata(&params)
                    .await
                    .map_err(Error::kubernetes("listing Beacons"))
            },
        )?;
        let gate_namespaces = gates.items.iter().filter_map(|m| m.namespace());
        let beacon_namespaces = beacons.items.iter().filter_map(|m| m.namespace());
        let namespaces: BTreeSet<String> = gate_namespaces.chain(beacon_namespaces).collect();
        Ok(namespaces.into_iter().collect())
    }

    /// Why the Gate is where it is. Three requests — the Gate and its Passages, then
    /// the Bundles it admits (which only the Gate names) — or none, from the cache.
    ///
    /// A Gate that is not there is [`Error::NotFound`], never an empty answer.
    ///
    /// ```no_run
    /// # async fn run(ops: hecate_ops::Ops) -> hecate_ops::Result<()> {
    /// let explanation = ops.explain("shop", "production").await?;
    /// for blocker in &explanation.blockers {
    ///     // `kind` is the stable code; `fix` is the command, in words.
    ///     println!("{}: {} ({})", blocker.kind.as_str(), blocker.detail, blocker.fix);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn explain(&self, namespace: &str, gate: &str) -> Result<Explanation> {
        Ok(Arc::unwrap_or_clone(
            self.explain_shared(namespace, gate).await?,
        ))
    }

    /// [`Ops::explain`] as a shared value: from the cache, the remembered answer itself
    /// rather than a copy of it — for a server that only serialises it (a Gate's
    /// answer lists every waiting Bundle: 85 KB of JSON at the fleet bench).
    pub async fn explain_shared(&self, namespace: &str, gate: &str) -> Result<Arc<Explanation>> {
        if let Some(cache) = self.cache() {
            return cache
                .explain(namespace, gate, self.now())
                .ok_or_else(|| not_found(Kind::Gate, namespace, gate));
        }
        let (gate, snapshot) = self.gate_snapshot(namespace, gate).await?;
        Ok(Arc::new(rules::explain::explain(
            &snapshot,
            &gate,
            self.now(),
        )))
    }

    /// `gate`'s targets and the crossing under way across them, else the newest that
    /// reached them ([`rules::rollout::view`]).
    pub async fn targets(&self, namespace: &str, gate: &str) -> Result<GateTargets> {
        let (gate, snapshot) = match self.cache() {
            Some(cache) => {
                let snapshot = cache.snapshot(namespace);
                let found = snapshot
                    .gates()
                    .find(|g| g.metadata.name.as_deref() == Some(gate))
                    .cloned()
                    .ok_or_else(|| not_found(Kind::Gate, namespace, gate))?;
                (found, snapshot)
            }
            None => {
                let (gate, snapshot) = self.gate_snapshot(namespace, gate).await?;
                (gate, Arc::new(snapshot))
            }
        };
        let name = gate.name_any();
        let passages: Vec<&Passage> = snapshot.passages_of(&name).collect();
        let bundles: Vec<&Bundle> = snapshot.bundles().collect();
        let rollout = rules::rollout::view::of_gate(&passages, &bundles);
        let fixes = rules::rollout::view::fixes(&gate, &passages, &bundles)
            .into_iter()
            .map(|action| crate::model::Alternative {
                fix: action.fix(namespace),
                action,
            })
            .collect();
        Ok(GateTargets {
            gate: name,
            namespace: namespace.to_string(),
            spans_targets: gate.spec.targets.is_some(),
            rollout,
            fixes,
        })
    }

    /// What Explain reads of one Gate: the Gate, its Passages and the Bundles it
    /// admits — three requests, the Bundles (the largest answer) asked for as soon as
    /// the Gate is here, not once its Passages have come too.
    async fn gate_snapshot(
        &self,
        namespace: &str,
        gate: &str,
    ) -> Result<(Gate, NamespaceSnapshot)> {
        let gate_and_bundles = async {
            let gate = self.get::<Gate>(Kind::Gate, namespace, gate).await?;
            let bundles = self.bundles_admitted_by(namespace, &gate).await?;
            Ok::<_, Error>((gate, bundles))
        };
        let ((gate, bundles), passages) = futures::try_join!(
            gate_and_bundles,
            self.passages_matching(namespace, Some(gate), None),
        )?;
        let snapshot = NamespaceSnapshot::new(namespace, vec![gate.clone()], bundles, passages);
        Ok((gate, snapshot))
    }

    /// What `person` would meet if they promoted each Bundle `gate`'s explanation
    /// lists as eligible: refused and why, or not — promote's own judgement
    /// ([`rules::promotion::your_crossings`]), asked before the click. Explain is the
    /// same for everyone; this is the caller's part (their own approval never counts
    /// for them). The requests Explain makes, or none from the cache.
    ///
    /// A Gate that is not there is [`Error::NotFound`].
    pub async fn your_crossings(
        &self,
        namespace: &str,
        gate: &str,
        person: &Person,
    ) -> Result<YourCrossings> {
        let now = self.now();
        if let Some(cache) = self.cache() {
            let snapshot = cache.snapshot(namespace);
            let (Some(found), Some(explanation)) =
                (snapshot.gate(gate), cache.explain(namespace, gate, now))
            else {
                return Err(not_found(Kind::Gate, namespace, gate));
            };
            return Ok(rules::promotion::your_crossings(
                &snapshot,
                found,
                &explanation.eligible,
                person,
                now,
            ));
        }
        let (gate, snapshot) = self.gate_snapshot(namespace, gate).await?;
        let explanation = rules::explain::explain(&snapshot, &gate, now);
        Ok(rules::promotion::your_crossings(
            &snapshot,
            &gate,
            &explanation.eligible,
            person,
            now,
        ))
    }

    /// Every Gate in `scope`, explained and summarised, with totals and two weeks of
    /// activity; each namespace's Gates upstream first. Three requests (Gates,
    /// Bundles, Passages) whatever the scope, or none from the cache.
    ///
    /// ```no_run
    /// use hecate_ops::Scope;
    /// # async fn run(ops: hecate_ops::Ops) -> hecate_ops::Result<()> {
    /// let overview = ops.overview(&Scope::Namespaces(vec!["shop".into()])).await?;
    /// for namespace in &overview.namespaces {
    ///     for gate in &namespace.gates {
    ///         println!("{}/{}: {}", namespace.namespace, gate.name, gate.state.as_str());
    ///     }
    /// }
    /// println!("{} Passages running", overview.totals.running);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn overview(&self, scope: &Scope) -> Result<Overview> {
        let now = self.now();
        if let Some(cache) = self.cache() {
            let parts: Vec<_> = cached_namespaces(cache, scope)
                .iter()
                .filter_map(|namespace| cache.overview_part(namespace, now))
                .collect();
            return Ok(rules::overview::assemble(
                parts.iter().map(AsRef::as_ref),
                now,
            ));
        }
        let snapshots = self.snapshots(scope).await?;
        Ok(rules::overview::overview_with(
            snapshots.iter().map(AsRef::as_ref),
            now,
            |snapshot, gate| self.explained(snapshot, gate, now),
        ))
    }

    /// Every Gate in `scope` explained: namespaces by name, each one's Gates upstream
    /// first — what `hecate status -o json` prints. Requests as [`Ops::overview`].
    pub async fn explanations(&self, scope: &Scope) -> Result<Vec<Explanation>> {
        Ok(self.explanations_until(scope).await?.explanations)
    }

    /// [`Ops::explanations`], and until when they hold if no object changes: the
    /// earliest instant time alone changes one of them (a window opens or closes, a
    /// crossing that has not started is named `NotStarted`; see
    /// [`rules::explain::unchanged_until`]). What a live view redraws at.
    pub async fn explanations_until(&self, scope: &Scope) -> Result<TimedExplanations> {
        let snapshots = self.snapshots(scope).await?;
        let now = self.now();
        let mut explanations = Vec::new();
        let mut unchanged_until: Option<Timestamp> = None;
        for snapshot in &snapshots {
            for (gate, _) in rules::pipeline::upstream_first(snapshot.gates()) {
                explanations.push(Explanation::clone(&self.explained(snapshot, gate, now)));
                let until = rules::explain::unchanged_until(snapshot, gate, now);
                unchanged_until = unchanged_until.into_iter().chain(until).min();
            }
        }
        Ok(TimedExplanations {
            explanations,
            at: now,
            unchanged_until,
        })
    }

    /// `gate`'s explanation at `now`: the cache's remembered one, else judged here.
    fn explained(
        &self,
        snapshot: &NamespaceSnapshot,
        gate: &Gate,
        now: Timestamp,
    ) -> Arc<Explanation> {
        self.cache()
            .and_then(|cache| cache.explain(snapshot.namespace(), &gate.name_any(), now))
            .unwrap_or_else(|| Arc::new(rules::explain::explain(snapshot, gate, now)))
    }

    /// The snapshots of the namespaces in `scope` that hold a Gate, by namespace name:
    /// from the cache, or three LISTs — one namespace is listed directly; several, or
    /// all, are listed cluster-wide and filtered here.
    async fn snapshots(&self, scope: &Scope) -> Result<Vec<Arc<NamespaceSnapshot>>> {
        if let Some(cache) = self.cache() {
            return Ok(cached_namespaces(cache, scope)
                .iter()
                .map(|ns| cache.snapshot(ns))
                .filter(|s| s.gates().len() > 0)
                .collect());
        }
        let namespace = match scope {
            Scope::Namespaces(list) if list.is_empty() => return Ok(Vec::new()),
            Scope::Namespaces(list) if list.len() == 1 => Some(list[0].as_str()),
            _ => None,
        };
        let (gates, bundles, passages) = futures::try_join!(
            self.list::<Gate>(Kind::Gate, namespace),
            self.list::<Bundle>(Kind::Bundle, namespace),
            self.list::<Passage>(Kind::Passage, namespace),
        )?;
        let mut snapshots = NamespaceSnapshot::by_namespace(gates, bundles, passages);
        if let Scope::Namespaces(visible) = scope {
            snapshots.retain(|s| visible.iter().any(|v| v == s.namespace()));
        }
        Ok(snapshots.into_iter().map(Arc::new).collect())
    }

    /// The Bundles of `namespace` waiting on a person for a Gate — approvals still
    /// missing under `requireApproval` or an approval policy, or a "no" that stands —
    /// each with where its approvals stand and what `viewer`'s own approval or
    /// withdrawal would do (their groups, as the cluster reported them). Gates
    /// upstream first. Three requests (Gates, Bundles, Passages), or none from the
    /// cache.
    pub async fn approval_queue(
        &self,
        namespace: &str,
        viewer: &Person,
    ) -> Result<Vec<QueuedApproval>> {
        let snapshot = self.snapshot(namespace).await?;
        Ok(rules::approval::queue(&snapshot, viewer, self.now()))
    }

    /// Who is told about `namespace`'s releases (about `gate`'s, if one is named) and
    /// what they sent (DECISION 166). One request: the namespace's Notifiers, whose
    /// status is the record; and the Gate's, when one is named, which must exist.
    pub async fn notifications(
        &self,
        namespace: &str,
        gate: Option<&str>,
    ) -> Result<crate::model::Notifications> {
        if let Some(gate) = gate {
            self.gate(namespace, gate).await?;
        }
        let notifiers: Vec<hecate_types::Notifier> =
            crate::lenient::list(self.client(), namespace, &Default::default())
                .await
                .map_err(Error::kubernetes("listing Notifiers"))?;
        Ok(rules::notice::listing(namespace, &notifiers, gate))
    }

    /// How well `namespace` delivers over the `period` before now — lead time,
    /// deployment frequency, change failure rate and time to restore, per Gate (only
    /// `gate`'s when given) and for the pipeline's last stage (DECISION 138). Three
    /// requests (Gates, Bundles, Passages), or none from the cache.
    pub async fn delivery(
        &self,
        namespace: &str,
        gate: Option<&str>,
        period: jiff::SignedDuration,
    ) -> Result<crate::model::Delivery> {
        let snapshot = self.snapshot(namespace).await?;
        let now = self.now();
        rules::delivery::delivery(&snapshot, gate, now - period, now)
            .ok_or_else(|| not_found(Kind::Gate, namespace, gate.unwrap_or_default()))
    }

    /// What changed from what `against` names to Bundle `bundle` in `namespace`: the
    /// artifacts side by side and the commits between them (DECISION 140,
    /// [`rules::diff`]). One LIST of the namespace's Bundles, and one GET of the Gate
    /// and one LIST of its Passages when `against` may name one — or none, from the
    /// cache.
    ///
    /// A Bundle or Gate that is not there (a name no object could have included) is
    /// [`Error::NotFound`]; [`DiffAgainst::Named`] names a Bundle when no Gate has the
    /// name.
    pub async fn diff(
        &self,
        namespace: &str,
        bundle: &str,
        against: DiffAgainst,
    ) -> Result<BundleDiff> {
        use hecate_types::names::is_dns_subdomain;
        let missing = |missing: rules::diff::Missing| match missing {
            rules::diff::Missing::Gate(name) => not_found(Kind::Gate, namespace, &name),
            rules::diff::Missing::Bundle(name) => not_found(Kind::Bundle, namespace, &name),
        };
        if !is_dns_subdomain(bundle) {
            return Err(not_found(Kind::Bundle, namespace, bundle));
        }
        // A name no Gate could have names none: asked by name, it is a Bundle's.
        let gate_name = against.gate().filter(|name| is_dns_subdomain(name));
        if let Some(cache) = self.cache() {
            let snapshot = cache.snapshot(namespace);
            let bundles: Vec<&Bundle> = snapshot.bundles().collect();
            let gate = gate_name.and_then(|name| snapshot.gate(name));
            let passages: Vec<&Passage> = gate_name
                .map(|name| snapshot.passages_of(name).collect())
                .unwrap_or_default();
            return rules::diff::judge(&bundles, gate, &passages, bundle, &against)
                .map_err(missing);
        }
        let gate = async {
            match gate_name {
                Some(name) => self
                    .api::<Gate>(namespace)
                    .get_opt(name)
                    .await
                    .map_err(Error::kubernetes(format!("reading Gate {name}"))),
                None => Ok(None),
            }
        };
        // What the Gate's newest crossing left on its branch is part of what it runs.
        let passages = async {
            match gate_name {
                Some(name) => self.passages_matching(namespace, Some(name), None).await,
                None => Ok(Vec::new()),
            }
        };
        let (gate, bundles, passages) = futures::try_join!(
            gate,
            self.list::<Bundle>(Kind::Bundle, Some(namespace)),
            passages
        )?;
        let bundles: Vec<&Bundle> = bundles.iter().collect();
        let passages: Vec<&Passage> = passages.iter().collect();
        rules::diff::judge(&bundles, gate.as_ref(), &passages, bundle, &against).map_err(missing)
    }

    /// What happened in `namespace`, newest first: crossings, refusals, crossings in
    /// progress, approvals and aborts. Three requests (Gates, Passages, Bundles), or
    /// none from the cache.
    pub async fn audit(&self, namespace: &str) -> Result<Vec<crate::model::AuditEntry>> {
        Ok(rules::audit::audit(&*self.snapshot(namespace).await?))
    }
}

/// The namespaces of `scope` as the cache knows them, sorted, each once (all: those
/// holding a Gate).
fn cached_namespaces(cache: &crate::Cache, scope: &Scope) -> Vec<String> {
    let mut namespaces = match scope {
        Scope::All => cache.gate_namespaces(),
        Scope::Namespaces(list) => list.clone(),
    };
    namespaces.sort();
    namespaces.dedup();
    namespaces
}

/// Whether `passage` crosses `gate` with `bundle`, each when given.
fn crosses(passage: &Passage, gate: Option<&str>, bundle: Option<&str>) -> bool {
    gate.is_none_or(|g| passage.spec.gate == g) && bundle.is_none_or(|b| passage.spec.bundle == b)
}

/// `object` without `metadata.managedFields`: server-side bookkeeping no reader of
/// Hecate's answers needs (kubectl hides it too), and the cache does not keep it, so
/// every read answers the same way. A write of such an object leaves the server's
/// record of managers as it was.
/// The objects of a list that decode, without their managed fields; each that does
/// not is logged and left out (DECISIONS 110): one bad object never fails a list.
fn decoded<K: Resource>(kind: Kind, items: Vec<Lenient<K>>) -> Vec<K> {
    crate::lenient::decoded(kind, items)
        .into_iter()
        .map(without_managed_fields)
        .collect()
}

pub(crate) fn without_managed_fields<K: Resource>(mut object: K) -> K {
    object.meta_mut().managed_fields = None;
    object
}
