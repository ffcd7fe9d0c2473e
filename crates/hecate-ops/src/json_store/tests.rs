use hecate_types::{Passage, PassagePhase, PassageSpec, PassageStatus, wellknown};
use kube::runtime::watcher::Event;
use pretty_assertions::assert_eq;

use super::*;

fn passage(namespace: &str, name: &str, gate: &str, version: &str) -> Passage {
    let mut passage = Passage::new(
        name,
        PassageSpec {
            gate: gate.into(),
            bundle: "app-1".into(),
            ..PassageSpec::default()
        },
    );
    passage.metadata.namespace = Some(namespace.into());
    passage.metadata.resource_version = Some(version.into());
    passage.metadata.labels = Some([(wellknown::LABEL_GATE.to_string(), gate.to_string())].into());
    passage
}

fn store() -> JsonStore<Passage> {
    JsonStore::grouped(|p| {
        p.metadata
            .labels
            .as_ref()?
            .get(wellknown::LABEL_GATE)
            .map(String::as_str)
    })
}

fn names(mut passages: Vec<Passage>) -> Vec<String> {
    let mut names: Vec<String> = passages
        .drain(..)
        .map(|p| p.metadata.name.unwrap_or_default())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn the_first_list_is_seen_whole_when_it_ends() {
    let store = store();
    assert_eq!(store.apply(Event::Init), Change::Nothing);
    let a = passage("shop", "dev-1", "dev", "1");
    assert_eq!(store.apply(Event::InitApply(a.clone())), Change::Nothing);
    assert!(
        store.in_namespace("shop").is_empty(),
        "half a list is never read"
    );
    let waiting = tokio::spawn({
        let store = store.clone();
        async move { store.ready().await }
    });
    tokio::task::yield_now().await;
    assert!(!waiting.is_finished(), "not ready before the list ends");
    assert_eq!(
        store.apply(Event::InitDone),
        Change::Listed {
            first: true,
            changed: vec![],
            gone: vec![]
        }
    );
    waiting.await.expect("ready after the first list");
    assert_eq!(store.in_namespace("shop"), vec![a]);
    assert_eq!(store.namespaces(), BTreeSet::from(["shop".to_string()]));
}

#[test]
fn a_change_is_answered_with_the_object_as_held_before() {
    let store = store();
    store.apply(Event::Init);
    store.apply(Event::InitDone);
    let first = passage("shop", "dev-1", "dev", "1");
    assert_eq!(
        store.apply(Event::Apply(first.clone())),
        Change::Applied {
            before: None,
            now: first.clone()
        }
    );
    let mut finished = passage("shop", "dev-1", "dev", "2");
    finished.status = Some(PassageStatus {
        phase: Some(PassagePhase::Succeeded),
        ..PassageStatus::default()
    });
    assert_eq!(
        store.apply(Event::Apply(finished.clone())),
        Change::Applied {
            before: Some(first),
            now: finished.clone()
        }
    );
    // The event of a delete may carry less than was held: the answer is what was held.
    let bare = passage("shop", "dev-1", "dev", "3");
    assert_eq!(store.apply(Event::Delete(bare)), Change::Deleted(finished));
    assert!(store.namespaces().is_empty(), "an emptied namespace goes");
    let unknown = passage("shop", "dev-9", "dev", "4");
    assert_eq!(
        store.apply(Event::Delete(unknown.clone())),
        Change::Deleted(unknown)
    );
}

#[test]
fn a_reader_asks_for_one_namespace_or_one_group_of_it() {
    let store = store();
    store.apply(Event::Init);
    for (namespace, name, gate) in [
        ("shop", "dev-1", "dev"),
        ("shop", "dev-2", "dev"),
        ("shop", "prod-1", "prod"),
        ("bank", "dev-1", "dev"),
    ] {
        store.apply(Event::InitApply(passage(namespace, name, gate, "1")));
    }
    store.apply(Event::InitDone);
    assert_eq!(
        names(store.in_namespace("shop")),
        ["dev-1", "dev-2", "prod-1"]
    );
    assert_eq!(names(store.in_group("shop", "dev")), ["dev-1", "dev-2"]);
    assert_eq!(names(store.in_group("bank", "dev")), ["dev-1"]);
    assert!(store.in_group("shop", "staging").is_empty());
    assert!(store.in_namespace("nowhere").is_empty());
    let (count, bytes) = store.size();
    assert_eq!(count, 4);
    assert!(bytes > 4 * 100, "each held as its JSON: {bytes} bytes");
}

#[test]
fn a_list_again_reports_what_it_changed_and_what_went_when_it_ends() {
    let store = store();
    store.apply(Event::Init);
    let kept = passage("shop", "dev-1", "dev", "1");
    let changed = passage("shop", "dev-2", "dev", "1");
    let gone = passage("shop", "dev-3", "dev", "1");
    let elsewhere = passage("bank", "dev-1", "dev", "1");
    for p in [&kept, &changed, &gone, &elsewhere] {
        store.apply(Event::InitApply(p.clone()));
    }
    store.apply(Event::InitDone);

    store.apply(Event::Init);
    let changed_now = passage("shop", "dev-2", "dev", "7");
    let new = passage("shop", "dev-4", "dev", "7");
    for p in [&kept, &changed_now, &new] {
        assert_eq!(store.apply(Event::InitApply(p.clone())), Change::Nothing);
    }
    assert_eq!(
        names(store.in_namespace("shop")),
        ["dev-1", "dev-2", "dev-3"],
        "readers see what was held until the list ends"
    );
    let Change::Listed {
        first,
        changed: reported,
        gone: mut went,
    } = store.apply(Event::InitDone)
    else {
        panic!("a list's end is reported");
    };
    assert!(!first);
    assert_eq!(
        reported,
        vec![(Some(changed), changed_now), (None, new)],
        "the unchanged one is not reported"
    );
    went.sort_by(|a, b| a.metadata.namespace.cmp(&b.metadata.namespace));
    assert_eq!(went, vec![elsewhere, gone]);
    assert_eq!(
        names(store.in_namespace("shop")),
        ["dev-1", "dev-2", "dev-4"]
    );
    assert!(store.in_namespace("bank").is_empty());
}
