//! `oci-push` and `oci-pull` (spec §5.12): the steps that move a directory to and from
//! an OCI registry as a Flux-compatible artifact.

use serde::Deserialize;

use super::StepConfig;
use super::fields::{SecretRef, inside_work_dir, required};

/// `oci-push`: package a directory as an artifact and push it.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OciPushConfig {
    /// The directory to package, relative to the work directory.
    pub path: String,
    /// The repository to push to, without a scheme (`ghcr.io/org/manifests`).
    pub repo: String,
    /// The tag to push.
    pub tag: String,
    /// Recorded as the artifact's source annotation.
    #[serde(default)]
    pub source: String,
    /// Recorded as the artifact's revision annotation.
    #[serde(default)]
    pub revision: String,
    /// Talk to the registry over plain HTTP.
    #[serde(default)]
    pub insecure: bool,
    /// Registry credentials; none = anonymous.
    #[serde(default)]
    pub credentials_ref: Option<SecretRef>,
}

impl StepConfig for OciPushConfig {
    fn check(&self) -> Result<(), String> {
        required("path", &self.path)?;
        inside_work_dir("path", &self.path)?;
        required("repo", &self.repo)?;
        required("tag", &self.tag)?;
        SecretRef::check_optional("credentialsRef", self.credentials_ref.as_ref())
    }
}

/// `oci-pull`: fetch an artifact and unpack it into a directory.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OciPullConfig {
    /// The repository to pull from, without a scheme.
    pub repo: String,
    /// The tag to pull; exactly one of `tag` and `digest` is set.
    #[serde(default)]
    pub tag: String,
    /// The digest to pull; exactly one of `tag` and `digest` is set.
    #[serde(default)]
    pub digest: String,
    /// The directory to unpack into (emptied first), relative to the work directory.
    pub out: String,
    /// Talk to the registry over plain HTTP.
    #[serde(default)]
    pub insecure: bool,
    /// Registry credentials; none = anonymous.
    #[serde(default)]
    pub credentials_ref: Option<SecretRef>,
}

impl StepConfig for OciPullConfig {
    fn check(&self) -> Result<(), String> {
        required("repo", &self.repo)?;
        match (self.tag.trim().is_empty(), self.digest.trim().is_empty()) {
            (true, true) => return Err("set tag or digest to say what to pull".into()),
            (false, false) => return Err("set tag or digest, not both".into()),
            _ => {}
        }
        required("out", &self.out)?;
        inside_work_dir("out", &self.out)?;
        SecretRef::check_optional("credentialsRef", self.credentials_ref.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{accepted, accepts, refuses};

    #[test]
    fn oci_push() {
        let push: super::OciPushConfig = accepted(
            "oci-push",
            json!({"path": "out", "repo": "ghcr.io/org/manifests", "tag": "dev"}),
        );
        assert!(!push.insecure && push.credentials_ref.is_none());
        accepts(
            "oci-push",
            json!({"path": "out", "repo": "localhost:5000/m", "tag": "${{ bundle.alias }}",
                   "source": "https://github.com/org/fleet", "revision": "${{ steps.commit.sha }}",
                   "insecure": true, "credentialsRef": {"name": "registry"}}),
        );

        let full = json!({"path": "out", "repo": "r", "tag": "t"});
        for key in ["path", "repo", "tag"] {
            let mut with = full.clone();
            with.as_object_mut().expect("an object").remove(key);
            refuses("oci-push", with, &[&format!("missing field `{key}`")]);
        }
        refuses(
            "oci-push",
            json!({"path": "out", "repo": "r", "tag": ""}),
            &["tag must not be empty"],
        );
        refuses(
            "oci-push",
            json!({"path": "../out", "repo": "r", "tag": "t"}),
            &["path"],
        );
        refuses(
            "oci-push",
            json!({"path": "out", "repo": "r", "tag": "t", "insecureSkipVerify": true}),
            &["unknown field `insecureSkipVerify`"],
        );
    }

    #[test]
    fn oci_pull() {
        accepts(
            "oci-pull",
            json!({"repo": "ghcr.io/org/m", "tag": "dev", "out": "manifests"}),
        );
        accepts(
            "oci-pull",
            json!({"repo": "r", "digest": "${{ steps.push.digest }}", "out": "m",
                   "insecure": true, "credentialsRef": {"name": "registry"}}),
        );

        refuses(
            "oci-pull",
            json!({"tag": "t", "out": "m"}),
            &["missing field `repo`"],
        );
        refuses(
            "oci-pull",
            json!({"repo": "r", "tag": "t"}),
            &["missing field `out`"],
        );
        refuses(
            "oci-pull",
            json!({"repo": "r", "out": "m"}),
            &["tag or digest"],
        );
        refuses(
            "oci-pull",
            json!({"repo": "r", "tag": "t", "digest": "sha256:ab", "out": "m"}),
            &["not both"],
        );
        refuses(
            "oci-pull",
            json!({"repo": "r", "tag": "t", "out": "../m"}),
            &["out"],
        );
        refuses(
            "oci-pull",
            json!({"repo": "r", "tag": "t", "out": "m", "path": "x"}),
            &["unknown field `path`"],
        );
    }
}
