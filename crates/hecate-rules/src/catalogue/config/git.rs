//! `git-clone`, `git-commit` and `git-push` (spec §5.3–5.5): the steps that change a
//! repository through a local checkout.

use serde::Deserialize;

use super::StepConfig;
use super::fields::{SecretRef, checkout, inside_work_dir, required};

/// `git-clone`: fetch a repository into the work directory, or reuse the checkout an
/// earlier attempt left.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GitCloneConfig {
    /// The remote to clone.
    pub repo: String,
    /// The branch to check out; blank = the remote's default branch.
    #[serde(default)]
    pub branch: String,
    /// The checkout directory; blank = `repo` (see [`GitCloneConfig::checkout`]).
    #[serde(default)]
    pub path: String,
    /// History depth; 0 = all of it.
    #[serde(default)]
    pub depth: u32,
    /// Git credentials (spec §5.2); none = anonymous or ambient.
    #[serde(default)]
    pub credentials_ref: Option<SecretRef>,
}

impl GitCloneConfig {
    /// The checkout directory, relative to the work directory.
    pub fn checkout(&self) -> &str {
        checkout(&self.path)
    }
}

impl StepConfig for GitCloneConfig {
    fn check(&self) -> Result<(), String> {
        required("repo", &self.repo)?;
        inside_work_dir("path", &self.path)?;
        SecretRef::check_optional("credentialsRef", self.credentials_ref.as_ref())
    }
}

/// `git-commit`: record the checkout's changes as one deterministic commit.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GitCommitConfig {
    /// The commit message.
    pub message: String,
    /// The checkout directory; blank = `repo`.
    #[serde(default)]
    pub path: String,
    /// What to stage, relative to the checkout; empty = every change. The reference
    /// ignores this list (its quirk Q15); we stage only these paths.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Author and committer; unset parts take [`Author`]'s defaults.
    #[serde(default)]
    pub author: Author,
    /// Commit even when nothing changed.
    #[serde(default)]
    pub allow_empty: bool,
}

impl GitCommitConfig {
    /// The checkout directory, relative to the work directory.
    pub fn checkout(&self) -> &str {
        checkout(&self.path)
    }
}

impl StepConfig for GitCommitConfig {
    fn check(&self) -> Result<(), String> {
        if self.message.trim().is_empty() {
            return Err("message must not be blank".into());
        }
        inside_work_dir("path", &self.path)?;
        for (i, path) in self.paths.iter().enumerate() {
            inside_work_dir(&format!("paths[{i}]"), path)?;
        }
        Ok(())
    }
}

/// Who a promotion commit is by.
#[derive(Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Author {
    /// The name; blank = `Hecate`.
    #[serde(default)]
    pub name: String,
    /// The email address; blank = `hecate@users.noreply.github.com`.
    #[serde(default)]
    pub email: String,
}

impl Author {
    /// The name to record.
    pub fn name(&self) -> &str {
        or_default(&self.name, "Hecate")
    }

    /// The email address to record.
    pub fn email(&self) -> &str {
        or_default(&self.email, "hecate@users.noreply.github.com")
    }
}

/// `git-push`: publish the checkout's HEAD.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GitPushConfig {
    /// The checkout directory; blank = `repo`.
    #[serde(default)]
    pub path: String,
    /// The branch to push to; blank = the checked-out branch.
    #[serde(default)]
    pub branch: String,
    /// Push to `hecate/<passage name>` instead.
    #[serde(default)]
    pub to_new_branch: bool,
    /// Overwrite the remote branch.
    #[serde(default)]
    pub force: bool,
    /// Git credentials (spec §5.2); not inherited from `git-clone`.
    #[serde(default)]
    pub credentials_ref: Option<SecretRef>,
}

impl GitPushConfig {
    /// The checkout directory, relative to the work directory.
    pub fn checkout(&self) -> &str {
        checkout(&self.path)
    }
}

impl StepConfig for GitPushConfig {
    fn check(&self) -> Result<(), String> {
        inside_work_dir("path", &self.path)?;
        SecretRef::check_optional("credentialsRef", self.credentials_ref.as_ref())
    }
}

fn or_default<'a>(value: &'a str, default: &'a str) -> &'a str {
    if value.trim().is_empty() {
        default
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{accepted, accepts, refuses};

    #[test]
    fn git_clone() {
        let clone: super::GitCloneConfig =
            accepted("git-clone", json!({"repo": "https://x/y.git"}));
        assert_eq!(clone.checkout(), "repo");
        assert_eq!(clone.depth, 0);
        accepts(
            "git-clone",
            json!({"repo": "${{ vars.fleet }}", "branch": "env/dev", "path": "fleet",
                   "depth": 1, "credentialsRef": {"name": "git"}}),
        );

        refuses("git-clone", json!({}), &["missing field `repo`"]);
        refuses(
            "git-clone",
            json!({"repo": " "}),
            &["repo must not be empty"],
        );
        refuses(
            "git-clone",
            json!({"repo": "x", "brnach": "main"}),
            &["unknown field `brnach`"],
        );
        refuses("git-clone", json!({"repo": "x", "depth": -1}), &["depth"]);
        refuses(
            "git-clone",
            json!({"repo": "x", "path": "../elsewhere"}),
            &["path", "out of the work directory"],
        );
        refuses(
            "git-clone",
            json!({"repo": "x", "credentialsRef": {"name": ""}}),
            &["credentialsRef.name must not be empty"],
        );
        refuses(
            "git-clone",
            json!({"repo": "x", "credentialsRef": {"name": "a", "key": "b"}}),
            &["credentialsRef", "unknown field `key`"],
        );
    }

    #[test]
    fn git_commit() {
        let commit: super::GitCommitConfig = accepted("git-commit", json!({"message": "promote"}));
        assert_eq!(commit.checkout(), "repo");
        assert_eq!(commit.author.name(), "Hecate");
        assert_eq!(commit.author.email(), "hecate@users.noreply.github.com");
        assert!(!commit.allow_empty);
        accepts(
            "git-commit",
            json!({"message": "dev: ${{ bundle.name }}", "paths": ["envs/dev"],
                   "author": {"name": "Bot"}, "allowEmpty": true}),
        );

        refuses("git-commit", json!({}), &["missing field `message`"]);
        refuses(
            "git-commit",
            json!({"message": " \n"}),
            &["message must not be blank"],
        );
        refuses(
            "git-commit",
            json!({"mesage": "promote"}),
            &["unknown field `mesage`", "expected one of `message`"],
        );
        refuses(
            "git-commit",
            json!({"message": "m", "author": {"name": "a", "mail": "b"}}),
            &["author", "unknown field `mail`"],
        );
        refuses(
            "git-commit",
            json!({"message": "m", "paths": ["ok", "../../etc"]}),
            &["paths[1]"],
        );
        refuses(
            "git-commit",
            json!({"message": "m", "paths": "all"}),
            &["paths"],
        );
    }

    #[test]
    fn git_push() {
        let push: super::GitPushConfig = accepted("git-push", json!({}));
        assert_eq!(push.checkout(), "repo");
        assert!(!push.force && !push.to_new_branch);
        accepts(
            "git-push",
            json!({"branch": "env/dev", "toNewBranch": true, "force": true,
                   "credentialsRef": {"name": "git"}}),
        );

        refuses(
            "git-push",
            json!({"forse": true}),
            &["unknown field `forse`"],
        );
        refuses("git-push", json!({"force": "yes"}), &["force"]);
        refuses("git-push", json!({"path": ".."}), &["path"]);
        refuses(
            "git-push",
            json!({"credentialsRef": {}}),
            &["missing field `name`"],
        );
    }
}
