//! The text index's tail against a commit: a search before the commit (pending documents
//! scored in memory with the whole corpus's statistics) answers what the same search
//! answers after it — the same rows, in the same order, the same scores up to rounding.

use cuemem_core::text::{Analyzer, Plan, TextIndex, TAIL_LIMIT};
use proptest::prelude::*;
use roaring::RoaringBitmap;

const WORDS: [&str; 12] = [
    "adoption",
    "agency",
    "lunch",
    "team",
    "letter",
    "paperwork",
    "sync",
    "thursday",
    "東京",
    "会議",
    "quokka",
    "the",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(&WORDS[..]), 0..9).prop_map(|w| w.join(" "))
}

/// Same rows and order, scores within float tolerance; rows may trade places only where
/// their scores tie up to rounding (a float sum taken in another order), and so may a row
/// and one the limit left out, where both tie with the last row kept.
fn same(before: &[(u32, f32)], after: &[(u32, f32)]) -> Result<(), TestCaseError> {
    prop_assert_eq!(before.len(), after.len(), "{:?} vs {:?}", before, after);
    for (i, (b, a)) in before.iter().zip(after).enumerate() {
        let tol = 1e-5 * a.1.abs().max(1.0);
        prop_assert!(
            (b.1 - a.1).abs() <= tol,
            "score {} at {}: {:?} vs {:?}",
            i,
            b.1,
            before,
            after
        );
        if b.0 != a.0 {
            let twin = after.iter().find(|x| x.0 == b.0).map(|x| x.1);
            let last = after.last().map_or(f32::NAN, |x| x.1);
            prop_assert!(
                twin.is_some_and(|t| (t - b.1).abs() <= tol)
                    || (twin.is_none() && (last - b.1).abs() <= tol),
                "row {} at {}: {:?} vs {:?}",
                b.0,
                i,
                before,
                after
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn a_search_before_the_commit_answers_as_after_it(
        committed in prop::collection::vec(text(), 0..30),
        pending in prop::collection::vec(text(), 1..20),
        queries in prop::collection::vec(text(), 1..6),
        picks in prop::collection::vec(any::<bool>(), 50),
        limit in 1usize..12,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut t = TextIndex::open(dir.path(), Analyzer::StemBigram, true).unwrap();
        let rows: Vec<u32> = (0..committed.len() as u32).collect();
        t.add(&rows, &committed).unwrap();
        if !committed.is_empty() {
            t.commit("{}").unwrap();
        }
        let more: Vec<u32> = (committed.len() as u32..(committed.len() + pending.len()) as u32).collect();
        t.add(&more, &pending).unwrap();
        prop_assert!(t.searches_pending());
        let candidates: RoaringBitmap = picks.iter().enumerate().filter(|(_, &p)| p).map(|(i, _)| i as u32).collect();
        let ask = |t: &TextIndex| -> Vec<Vec<(u32, f32)>> {
            let mut out = Vec::new();
            for q in &queries {
                out.push(t.search(q, None, limit, Plan::Auto).unwrap());
                for plan in [Plan::Scan, Plan::Seek] {
                    out.push(t.search(q, Some(&candidates), limit, plan).unwrap());
                }
            }
            out
        };
        let before = ask(&t);
        prop_assert!(t.holds_terms(&pending.join(" ")).unwrap() || t.query_terms(&pending.join(" ")).is_empty());
        t.commit("{}").unwrap();
        let after = ask(&t);
        for (b, a) in before.iter().zip(&after) {
            same(b, a)?;
        }
    }
}

#[test]
fn past_the_tail_limit_pending_documents_wait_for_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = TextIndex::open(dir.path(), Analyzer::StemBigram, true).unwrap();
    let rows: Vec<u32> = (0..=TAIL_LIMIT as u32).collect();
    let texts: Vec<&str> = rows.iter().map(|_| "quokka").collect();
    t.add(&rows[..1], &texts[..1]).unwrap();
    assert_eq!(t.search("quokka", None, 5, Plan::Auto).unwrap().len(), 1);
    t.add(&rows[1..], &texts[1..]).unwrap();
    assert!(!t.searches_pending());
    assert!(t.search("quokka", None, 5, Plan::Auto).unwrap().is_empty());
    t.commit("{}").unwrap();
    assert!(t.searches_pending());
    assert_eq!(t.search("quokka", None, 5, Plan::Auto).unwrap().len(), 5);
}

#[test]
fn erased_and_rolled_back_rows_leave_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = TextIndex::open(dir.path(), Analyzer::StemBigram, true).unwrap();
    t.add(&[0, 1], &["lunch with the team", "the adoption agency"])
        .unwrap();
    t.commit("{}").unwrap();
    t.add(&[2, 3], &["the quokka secret", "more lunch"])
        .unwrap();
    assert!(t.holds_terms("quokka").unwrap());
    assert_eq!(t.search("quokka", None, 5, Plan::Auto).unwrap()[0].0, 2);
    let gone: RoaringBitmap = [2].into_iter().collect();
    assert_eq!(t.erase(&gone, "{}").unwrap(), 1);
    assert!(!t.holds_terms("quokka").unwrap());
    assert!(t.search("quokka", None, 5, Plan::Auto).unwrap().is_empty());
    assert_eq!(
        t.search("lunch", None, 5, Plan::Auto)
            .unwrap()
            .iter()
            .map(|h| h.0)
            .collect::<Vec<_>>(),
        [3, 0]
    );
    t.add(&[4], &["a wombat"]).unwrap();
    assert_eq!(t.search("wombat", None, 5, Plan::Auto).unwrap().len(), 1);
    t.rollback().unwrap();
    assert!(
        t.search("wombat", None, 5, Plan::Auto).unwrap().is_empty()
            && !t.holds_terms("wombat").unwrap()
    );
}
