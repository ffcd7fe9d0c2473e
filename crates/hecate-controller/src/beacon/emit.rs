//! Emitting a Bundle (spec controller.md §1.6): the object built from a Beacon and the
//! artifacts it resolved, and its creation.
//!
//! The name is the content address (`<beacon>-<first 12 hex of the digest>`), so
//! "never the same content twice" is the API server's to enforce, not ours: whoever
//! creates the name first wins, every other attempt — a re-poll, a restarted
//! controller, a second replica racing this one — meets `AlreadyExists`, which is the
//! normal steady state and changes nothing (an existing Bundle is never updated).

use std::collections::BTreeMap;

use hecate_types::digest::{bundle_name, content_digest};
use hecate_types::{Artifact, Beacon, Bundle, BundleSpec, wellknown};
use kube::ResourceExt as _;
use kube::api::{Api, ObjectMeta, PostParams};

/// The Bundle a Beacon emits for `artifacts` (in watch order) at `now`: named by
/// content, labelled with the Beacon, its creation time kept to the nanosecond (so a
/// Bundle emitted in the same second as the last is still the newer), owned by nobody
/// (deleting the Beacon keeps its Bundles), and with its version for people as its
/// alias — `v1.3.0` — decided by ops' `rules::version`, as every surface reads it
/// (DECISION 140).
pub fn bundle_for(beacon: &Beacon, artifacts: Vec<Artifact>, now: jiff::Timestamp) -> Bundle {
    let name = beacon.name_any();
    let digest = content_digest(&artifacts);
    Bundle {
        metadata: ObjectMeta {
            name: Some(bundle_name(&name, &digest)),
            namespace: beacon.namespace(),
            labels: Some(BTreeMap::from([(
                wellknown::LABEL_BEACON.to_string(),
                name.clone(),
            )])),
            annotations: Some(hecate_ops::rules::eligibility::created_annotation(now)),
            ..ObjectMeta::default()
        },
        spec: BundleSpec {
            beacon: name,
            digest,
            // Cut to what the CRD holds (DECISION 145): three long tags would not fit.
            alias: hecate_types::limits::truncate(
                &hecate_ops::rules::version::derive(&artifacts),
                hecate_types::limits::MAX_ALIAS_LENGTH,
            )
            .to_string(),
            artifacts,
        },
        status: None,
    }
}

/// What creating a Bundle came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Emitted {
    /// This call created it.
    Created(String),
    /// It was there already (same content, or a person took the name).
    Existed(String),
}

impl Emitted {
    /// The Bundle's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Created(name) | Self::Existed(name) => name,
        }
    }
}

/// Creates `bundle`; `AlreadyExists` is an answer, not an error.
pub async fn create(client: &kube::Client, bundle: &Bundle) -> Result<Emitted, kube::Error> {
    let name = bundle.name_any();
    let api = Api::<Bundle>::namespaced(client.clone(), &bundle.namespace().unwrap_or_default());
    match api.create(&PostParams::default(), bundle).await {
        Ok(_) => Ok(Emitted::Created(name)),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(Emitted::Existed(name)),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use hecate_types::BeaconSpec;
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_bundle_is_named_and_labelled_by_its_content_and_beacon() {
        let mut beacon = Beacon::new("app", BeaconSpec::default());
        beacon.metadata.namespace = Some("shop".into());
        let artifacts = vec![Artifact::commit(
            "file:///srv/git/app.git",
            "0123456789abcdef0123456789abcdef01234567",
        )];
        let bundle = bundle_for(&beacon, artifacts.clone(), jiff::Timestamp::UNIX_EPOCH);
        // The spec's vector for this commit.
        assert!(
            bundle.spec.digest.starts_with("76d5a6eda356e03d"),
            "{}",
            bundle.spec.digest
        );
        assert_eq!(bundle.name_any(), "app-76d5a6eda356");
        assert_eq!(bundle.namespace().as_deref(), Some("shop"));
        assert_eq!(
            bundle
                .labels()
                .get(wellknown::LABEL_BEACON)
                .map(String::as_str),
            Some("app")
        );
        assert_eq!(bundle.spec.beacon, "app");
        assert_eq!(bundle.spec.artifacts, artifacts);
        // No tag: the commit's short SHA is its version.
        assert_eq!(bundle.spec.alias, "0123456");
        assert!(bundle.owner_references().is_empty());
    }

    #[test]
    fn the_same_content_in_another_order_is_the_same_bundle() {
        let beacon = Beacon::new("app", BeaconSpec::default());
        let api = Artifact::image("ghcr.io/acme/api", "1.2.3", "sha256:aaa");
        let web = Artifact::image("ghcr.io/acme/web", "", "sha256:bbb");
        let one = bundle_for(
            &beacon,
            vec![api.clone(), web.clone()],
            jiff::Timestamp::UNIX_EPOCH,
        );
        let other = bundle_for(&beacon, vec![web, api], jiff::Timestamp::UNIX_EPOCH);
        assert_eq!(one.name_any(), other.name_any());
        assert!(one.spec.digest.starts_with("0151d1d6c4cf9f3b"));
        // Its version follows the watch order; the content address does not.
        assert_eq!(one.spec.alias, "1.2.3, bbb");
        assert_eq!(other.spec.alias, "bbb, 1.2.3");
    }
}
