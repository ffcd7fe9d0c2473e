//! Many callers at once: exactly one crossing per Gate, every approval recorded.

use futures::future::join_all;
use hecate_ops::{Error, Ops, RefusalCode};
use hecate_testenv::TestEnv;
use hecate_types::Passage;
use pretty_assertions::assert_eq;

use crate::fixtures::*;

const REPEATS: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_promotions_of_one_gate_open_exactly_one_passage() {
    for round in 0..REPEATS {
        let env = TestEnv::new().await;
        let ns = env.namespace.clone();
        gate(&env, "staging", gate_spec(&[], false)).await;
        let names: Vec<String> = (0..4).map(|i| format!("b{i}")).collect();
        for name in &names {
            env.create(hecate_types::Bundle::new(name, bundle_spec()))
                .await;
        }
        let ops = Ops::new(env.admin.clone());
        let attempts = (0..20).map(|i| {
            let (ops, ns, bundle) = (ops.clone(), ns.clone(), names[i % names.len()].clone());
            tokio::spawn(async move {
                ops.promote(&ns, "staging", &bundle, &format!("user-{i}"))
                    .await
            })
        });
        let results: Vec<_> = join_all(attempts)
            .await
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        let created = results.iter().filter(|r| r.is_ok()).count();
        for result in &results {
            if let Err(error) = result {
                assert!(
                    matches!(
                        error,
                        Error::Refused {
                            code: RefusalCode::AlreadyCrossing,
                            ..
                        }
                    ),
                    "round {round}: only 'already crossing' refusals, got {error}"
                );
            }
        }
        let passages = env
            .api::<Passage>()
            .list(&Default::default())
            .await
            .unwrap()
            .items;
        assert_eq!((created, passages.len()), (1, 1), "round {round}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_approvals_for_ten_gates_are_all_recorded() {
    for round in 0..REPEATS {
        let env = TestEnv::new().await;
        let ns = env.namespace.clone();
        let gates: Vec<String> = (0..10).map(|i| format!("gate-{i}")).collect();
        for name in &gates {
            gate(&env, name, gate_spec(&[], true)).await;
        }
        env.create(hecate_types::Bundle::new("b1", bundle_spec()))
            .await;
        let ops = Ops::new(env.admin.clone());
        let approvals = gates.iter().enumerate().map(|(i, g)| {
            let (ops, ns, g) = (ops.clone(), ns.clone(), g.clone());
            tokio::spawn(async move { ops.approve(&ns, "b1", &g, &format!("approver-{i}")).await })
        });
        for result in join_all(approvals).await {
            assert!(result.unwrap().unwrap().recorded, "round {round}");
        }
        let bundle = ops.bundle(&ns, "b1").await.unwrap();
        let mut recorded: Vec<(String, String)> = bundle
            .status
            .unwrap()
            .approved_for
            .into_iter()
            .map(|a| (a.gate, a.actor))
            .collect();
        recorded.sort();
        let mut expected: Vec<(String, String)> = gates
            .iter()
            .enumerate()
            .map(|(i, g)| (g.clone(), format!("approver-{i}")))
            .collect();
        expected.sort();
        assert_eq!(recorded, expected, "round {round}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_approvals_of_one_gate_leave_one_and_all_succeed() {
    for round in 0..REPEATS {
        let env = TestEnv::new().await;
        let ns = env.namespace.clone();
        gate(&env, "production", gate_spec(&[], true)).await;
        env.create(hecate_types::Bundle::new("b1", bundle_spec()))
            .await;
        let ops = Ops::new(env.admin.clone());
        let approvals = (0..10).map(|i| {
            let (ops, ns) = (ops.clone(), ns.clone());
            tokio::spawn(async move {
                ops.approve(&ns, "b1", "production", &format!("approver-{i}"))
                    .await
            })
        });
        let results: Vec<_> = join_all(approvals)
            .await
            .into_iter()
            .map(|r| r.unwrap().unwrap())
            .collect();
        assert_eq!(
            results.iter().filter(|a| a.recorded).count(),
            1,
            "round {round}"
        );
        let winner = results
            .iter()
            .find(|a| a.recorded)
            .unwrap()
            .approved_by
            .clone();
        assert!(
            results.iter().all(|a| a.approved_by == winner),
            "everyone is told the same approver"
        );
        let bundle = ops.bundle(&ns, "b1").await.unwrap();
        assert_eq!(
            bundle.status.unwrap().approved_for.len(),
            1,
            "round {round}"
        );
    }
}
