//! Decoding one object at a time: an object that does not decode as its kind never
//! fails the list or the watch it came in (DECISIONS 110).
//!
//! The API server stores what its schema admits, and a free-form field (a step's
//! `with`) admits any nesting: a Gate nested 200 maps deep is stored, and serde_json
//! refuses to decode past 128 levels. Decoded as a whole, such an object failed the
//! whole cluster-wide LIST, and with it every Gate of every namespace. Read through
//! [`Lenient`], the list holds every other object decoded and that one as
//! [`Undecodable`]: its identity and why, to report on it and skip it.
//!
//! How: an item is first taken as raw JSON, which serde_json skips over without
//! recursing and without a depth limit, and only then decoded as `K` on its own, so one
//! item's depth is its own business. [`Undecodable::metadata`] holds the identity only
//! (managed fields mirror the object's shape, and are as deep as it).

use std::fmt;

use kube::Resource;
use kube::core::ObjectMeta;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::{Beacon, Bundle, Gate, Notifier, Passage};

/// An object of kind `K` as the API server sent it.
#[derive(Clone, Debug)]
pub enum Lenient<K> {
    /// It decoded.
    Decoded(K),
    /// It did not (boxed: it is rare, and the object it stands for is small).
    Undecodable(Box<Undecodable>),
}

/// An object that does not decode as its kind: who it is, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Undecodable {
    /// Its name, namespace, uid, resourceVersion and generation; nothing else.
    pub metadata: ObjectMeta,
    /// What the decoder said.
    pub error: String,
}

impl Undecodable {
    /// `namespace/name`, as a log line or a message names it.
    pub fn key(&self) -> String {
        format!(
            "{}/{}",
            self.metadata.namespace.as_deref().unwrap_or_default(),
            self.metadata.name.as_deref().unwrap_or_default()
        )
    }
}

impl fmt::Display for Undecodable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} cannot be read: {}", self.key(), self.error)
    }
}

/// A kind whose watches read it leniently: the object a store is told to forget when
/// one of its objects stops decoding.
pub trait Placeholder: Resource<DynamicType = ()> + Sized {
    /// An object with `metadata` and nothing else, standing for one that does not
    /// decode (only its identity is ever looked at).
    fn placeholder(metadata: ObjectMeta) -> Self;
}

macro_rules! placeholder {
    ($($kind:ident),*) => {$(
        impl Placeholder for $kind {
            fn placeholder(metadata: ObjectMeta) -> Self {
                Self { metadata, spec: Default::default(), status: None }
            }
        }
    )*};
}
placeholder!(Beacon, Bundle, Gate, Notifier, Passage);

impl<K> Lenient<K> {
    /// The object, if it decoded.
    pub fn decoded(self) -> Result<K, Box<Undecodable>> {
        match self {
            Self::Decoded(object) => Ok(object),
            Self::Undecodable(undecodable) => Err(undecodable),
        }
    }
}

impl<K: Placeholder> Lenient<K> {
    /// The object, or its placeholder.
    pub fn or_placeholder(self) -> K {
        match self {
            Self::Decoded(object) => object,
            Self::Undecodable(undecodable) => K::placeholder(undecodable.metadata),
        }
    }
}

/// Splits `objects` into those that decoded and those that did not.
pub fn partition<K>(objects: Vec<Lenient<K>>) -> (Vec<K>, Vec<Undecodable>) {
    let mut decoded = Vec::with_capacity(objects.len());
    let mut undecodable = Vec::new();
    for object in objects {
        match object {
            Lenient::Decoded(object) => decoded.push(object),
            Lenient::Undecodable(bad) => undecodable.push(*bad),
        }
    }
    (decoded, undecodable)
}

impl<'de, K: DeserializeOwned> Deserialize<'de> for Lenient<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <Box<RawValue>>::deserialize(deserializer)?;
        match serde_json::from_str::<K>(raw.get()) {
            Ok(object) => Ok(Self::Decoded(object)),
            Err(error) => {
                // Not even an identity: the item is no object, and the list is wrong.
                let identity: Identity =
                    serde_json::from_str(raw.get()).map_err(D::Error::custom)?;
                Ok(Self::Undecodable(Box::new(Undecodable {
                    metadata: identity.metadata.into(),
                    error: error.to_string(),
                })))
            }
        }
    }
}

/// What is read of an object that does not decode: every other field is skipped
/// unread (serde_json skips without recursing).
#[derive(Deserialize)]
struct Identity {
    #[serde(default)]
    metadata: IdentityMeta,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct IdentityMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    generation: Option<i64>,
}

impl From<IdentityMeta> for ObjectMeta {
    fn from(meta: IdentityMeta) -> Self {
        Self {
            name: meta.name,
            namespace: meta.namespace,
            uid: meta.uid,
            resource_version: meta.resource_version,
            generation: meta.generation,
            ..Self::default()
        }
    }
}

impl<K: Resource<DynamicType = ()>> Resource for Lenient<K> {
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(dt: &()) -> std::borrow::Cow<'_, str> {
        K::kind(dt)
    }
    fn group(dt: &()) -> std::borrow::Cow<'_, str> {
        K::group(dt)
    }
    fn version(dt: &()) -> std::borrow::Cow<'_, str> {
        K::version(dt)
    }
    fn api_version(dt: &()) -> std::borrow::Cow<'_, str> {
        K::api_version(dt)
    }
    fn plural(dt: &()) -> std::borrow::Cow<'_, str> {
        K::plural(dt)
    }
    fn meta(&self) -> &ObjectMeta {
        match self {
            Self::Decoded(object) => object.meta(),
            Self::Undecodable(undecodable) => &undecodable.metadata,
        }
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Self::Decoded(object) => object.meta_mut(),
            Self::Undecodable(undecodable) => &mut undecodable.metadata,
        }
    }
}

#[cfg(test)]
mod tests {
    use kube::core::ObjectList;

    use super::*;

    /// A Gate whose one step's `with` is nested `depth` maps deep.
    fn deep_gate(name: &str, depth: usize) -> String {
        let with = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
        format!(
            r#"{{"apiVersion":"hecate.dev/v1alpha1","kind":"Gate",
            "metadata":{{"name":"{name}","namespace":"team","uid":"u-{name}","resourceVersion":"7",
              "managedFields":[{{"fieldsV1":{with}}}]}},
            "spec":{{"admits":[],"passage":{{"steps":[{{"uses":"http","with":{with}}}]}}}}}}"#
        )
    }

    fn list(items: &[String]) -> String {
        format!(
            r#"{{"apiVersion":"hecate.dev/v1alpha1","kind":"GateList","metadata":{{"resourceVersion":"9"}},"items":[{}]}}"#,
            items.join(",")
        )
    }

    #[test]
    fn one_object_too_deep_does_not_fail_its_list() {
        let body = list(&[
            deep_gate("dev", 3),
            deep_gate("deep", 200),
            deep_gate("prod", 100),
        ]);
        // As a whole, the list does not decode: what stopped every Gate.
        let whole = serde_json::from_str::<ObjectList<Gate>>(&body).unwrap_err();
        assert!(whole.to_string().contains("recursion limit"), "{whole}");

        let lenient: ObjectList<Lenient<Gate>> = serde_json::from_str(&body).unwrap();
        let (decoded, undecodable) = partition(lenient.items);
        let names: Vec<_> = decoded
            .iter()
            .map(|g| g.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["dev", "prod"]);
        assert_eq!(undecodable.len(), 1);
        let deep = &undecodable[0];
        assert_eq!(deep.key(), "team/deep");
        assert_eq!(deep.metadata.uid.as_deref(), Some("u-deep"));
        assert_eq!(deep.metadata.resource_version.as_deref(), Some("7"));
        assert!(
            deep.error.contains("recursion limit exceeded"),
            "{}",
            deep.error
        );
        assert!(deep.to_string().starts_with("team/deep cannot be read: "));
    }

    #[test]
    fn a_watch_event_of_an_object_too_deep_decodes_as_undecodable() {
        let event = format!(
            r#"{{"type":"MODIFIED","object":{}}}"#,
            deep_gate("deep", 5_000)
        );
        let event: kube::core::WatchEvent<Lenient<Gate>> = serde_json::from_str(&event).unwrap();
        let kube::core::WatchEvent::Modified(Lenient::Undecodable(deep)) = event else {
            panic!("expected the object to be undecodable: {event:?}");
        };
        let placeholder = Gate::placeholder(deep.metadata.clone());
        assert_eq!(placeholder.metadata.name.as_deref(), Some("deep"));
        assert!(placeholder.spec.passage.is_none());
    }

    #[test]
    fn an_item_that_is_no_object_still_fails_its_list() {
        let body = list(&["[1, 2]".to_string()]);
        assert!(serde_json::from_str::<ObjectList<Lenient<Gate>>>(&body).is_err());
    }
}
