//! `edit-yaml` and `set-image` (spec §5.8, §5.9): the steps that change one scalar in
//! a YAML (or JSON) file of the checkout, in place.

use serde::Deserialize;
use serde::de::{Deserializer, Error as _};
use serde_json::{Number, Value};

use super::StepConfig;
use super::fields::{inside_work_dir, is_expression, required};

/// `edit-yaml`: set existing scalars in one file.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditYamlConfig {
    /// The file, relative to the work directory.
    pub path: String,
    /// The changes, applied in order, all or none.
    pub edits: Vec<Edit>,
}

impl StepConfig for EditYamlConfig {
    fn check(&self) -> Result<(), String> {
        required("path", &self.path)?;
        inside_work_dir("path", &self.path)?;
        if self.edits.is_empty() {
            return Err("edits must name at least one key to change".into());
        }
        for (i, edit) in self.edits.iter().enumerate() {
            required(&format!("edits[{i}].key"), &edit.key)?;
            if !is_expression(&edit.key) {
                parse_key(&edit.key).map_err(|why| format!("edits[{i}].key: {why}"))?;
            }
        }
        Ok(())
    }
}

/// One change: the scalar at `key` becomes `value`.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// Where the scalar is (see [`parse_key`]).
    pub key: String,
    /// What it becomes.
    pub value: EditValue,
}

/// A value an edit writes: only scalars, because the edit replaces one scalar's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditValue {
    /// Text, quoted as the file needs.
    String(String),
    /// A number, written as its JSON literal.
    Number(Number),
    /// `true` or `false`.
    Bool(bool),
}

impl<'de> Deserialize<'de> for EditValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(EditValue::String(text)),
            Value::Number(number) => Ok(EditValue::Number(number)),
            Value::Bool(flag) => Ok(EditValue::Bool(flag)),
            Value::Null => Err(D::Error::custom(
                "must be a string, number or boolean, not null",
            )),
            Value::Array(_) | Value::Object(_) => Err(D::Error::custom(
                "must be a string, number or boolean: an edit replaces one scalar",
            )),
        }
    }
}

/// One step along an edit's key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySegment {
    /// A mapping key.
    Field(String),
    /// A list position, from 0.
    Index(usize),
}

/// Reads an edit key: names joined by `.`, list positions as `[n]` (repeatable, as in
/// `a[0][1]`), and `\.` for a dot inside a name (`metadata.annotations.flux\.io/x`).
pub fn parse_key(key: &str) -> Result<Vec<KeySegment>, String> {
    let mut segments = Vec::new();
    let mut name = String::new();
    // A name must come next: at the start and after a `.`.
    let mut name_due = true;
    let mut after_index = false;
    let mut chars = key.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'.') => {
                chars.next();
                name.push('.');
                name_due = false;
            }
            '.' => {
                if name.is_empty() && !after_index {
                    return Err(format!("{key:?} has an empty name before a '.'"));
                }
                if !name.is_empty() {
                    segments.push(KeySegment::Field(std::mem::take(&mut name)));
                }
                name_due = true;
                after_index = false;
            }
            '[' => {
                if !name.is_empty() {
                    segments.push(KeySegment::Field(std::mem::take(&mut name)));
                } else if name_due && !segments.is_empty() {
                    return Err(format!("{key:?} has '.' straight before '['"));
                }
                let digits: String = chars.by_ref().take_while(|&d| d != ']').collect();
                let index = digits
                    .parse::<usize>()
                    .ok()
                    .filter(|_| digits.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| format!("{key:?} has [{digits}], not a list position [n]"))?;
                segments.push(KeySegment::Index(index));
                name_due = false;
                after_index = true;
            }
            _ if after_index => {
                return Err(format!("{key:?} needs '.' or '[' after ']'"));
            }
            _ => {
                name.push(c);
                name_due = false;
            }
        }
    }
    if !name.is_empty() {
        segments.push(KeySegment::Field(name));
    } else if name_due {
        return Err(format!("{key:?} ends without a name"));
    }
    Ok(segments)
}

/// `set-image`: point a kustomization's `images[]` entry at the Bundle's image.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetImageConfig {
    /// The kustomization file, relative to the work directory.
    pub path: String,
    /// The `images[].name` to change.
    pub image: String,
    /// The tag to write; with `digest` blank too, both come from the Bundle.
    #[serde(default)]
    pub tag: String,
    /// The digest to write; with `tag` blank too, both come from the Bundle.
    #[serde(default)]
    pub digest: String,
}

impl StepConfig for SetImageConfig {
    fn check(&self) -> Result<(), String> {
        required("path", &self.path)?;
        inside_work_dir("path", &self.path)?;
        required("image", &self.image)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{accepted, accepts, refuses};
    use super::{EditValue, KeySegment, parse_key};

    #[test]
    fn edit_yaml() {
        let edit: super::EditYamlConfig = accepted(
            "edit-yaml",
            json!({"path": "repo/values.yaml", "edits": [
                {"key": "app.revision", "value": "${{ bundle.commit('x').sha }}"},
                {"key": "app.replicas", "value": 3},
                {"key": "app.ratio", "value": 1.5},
                {"key": "app.enabled", "value": true},
                {"key": "${{ vars.key }}", "value": "v"},
            ]}),
        );
        assert_eq!(edit.edits[1].value, EditValue::Number(3.into()));
        assert_eq!(edit.edits[3].value, EditValue::Bool(true));

        refuses(
            "edit-yaml",
            json!({"edits": [{"key": "a", "value": 1}]}),
            &["missing field `path`"],
        );
        refuses(
            "edit-yaml",
            json!({"path": "f.yaml"}),
            &["missing field `edits`"],
        );
        refuses(
            "edit-yaml",
            json!({"path": "f.yaml", "edits": []}),
            &["edits"],
        );
        refuses(
            "edit-yaml",
            json!({"path": "", "edits": [{"key": "a", "value": 1}]}),
            &["path must not be empty"],
        );
        refuses(
            "edit-yaml",
            json!({"path": "../f.yaml", "edits": [{"key": "a", "value": 1}]}),
            &["path"],
        );
        refuses(
            "edit-yaml",
            json!({"path": "f.yaml", "edits": [{"key": "a", "value": 1}, {"value": 2}]}),
            &["edits[1]", "missing field `key`"],
        );
        refuses(
            "edit-yaml",
            json!({"path": "f.yaml", "edits": [{"key": "", "value": 2}]}),
            &["edits[0].key must not be empty"],
        );
        refuses(
            "edit-yaml",
            json!({"path": "f.yaml", "edits": [{"key": "a"}]}),
            &["edits[0]", "missing field `value`"],
        );
        refuses(
            "edit-yaml",
            json!({"path": "f.yaml", "edits": [{"key": "a", "vaule": 1}]}),
            &["unknown field `vaule`"],
        );
        refuses(
            "edit-yaml",
            json!({"path": "f.yaml", "edits": [{"key": "a", "value": 1}], "backup": true}),
            &["unknown field `backup`"],
        );
        for value in [json!(null), json!([1]), json!({"a": 1})] {
            refuses(
                "edit-yaml",
                json!({"path": "f.yaml", "edits": [{"key": "a", "value": value}]}),
                &["edits[0].value", "string, number or boolean"],
            );
        }
        refuses(
            "edit-yaml",
            json!({"path": "f.yaml", "edits": [{"key": "a..b", "value": 1}]}),
            &["edits[0].key", "empty name"],
        );
    }

    #[test]
    fn edit_keys() {
        use KeySegment::{Field, Index};
        let field = |name: &str| Field(name.to_string());
        let cases = [
            ("app.revision", vec![field("app"), field("revision")]),
            (
                "images[0].newTag",
                vec![field("images"), Index(0), field("newTag")],
            ),
            ("a[0][12]", vec![field("a"), Index(0), Index(12)]),
            ("[1].name", vec![Index(1), field("name")]),
            (
                r"metadata.annotations.flux\.io/x",
                vec![field("metadata"), field("annotations"), field("flux.io/x")],
            ),
            (r"a\b", vec![field(r"a\b")]),
        ];
        for (key, want) in cases {
            assert_eq!(parse_key(key), Ok(want), "{key}");
        }
        for bad in [
            "", ".a", "a.", "a..b", "a[", "a[x]", "a[-1]", "a[]", "a[0]b", "a.[0]",
        ] {
            assert!(parse_key(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn set_image() {
        let set: super::SetImageConfig = accepted(
            "set-image",
            json!({"path": "repo/kustomization.yaml", "image": "ghcr.io/org/app"}),
        );
        assert!(set.tag.is_empty() && set.digest.is_empty());
        accepts(
            "set-image",
            json!({"path": "k.yaml", "image": "app", "tag": "${{ bundle.image('app').tag }}",
                   "digest": "sha256:abc"}),
        );

        refuses(
            "set-image",
            json!({"image": "app"}),
            &["missing field `path`"],
        );
        refuses(
            "set-image",
            json!({"path": "k.yaml"}),
            &["missing field `image`"],
        );
        refuses(
            "set-image",
            json!({"path": "k.yaml", "image": ""}),
            &["image must not be empty"],
        );
        refuses(
            "set-image",
            json!({"path": "k.yaml", "image": "app", "newTag": "1"}),
            &["unknown field `newTag`"],
        );
        refuses(
            "set-image",
            json!({"path": "/../k.yaml", "image": "app"}),
            &["path"],
        );
    }
}
