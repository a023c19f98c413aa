//! Property tests of the cue index against a `BTreeSet` oracle.

use std::collections::{BTreeMap, BTreeSet};

use cuemem_core::cue::{CueIndex, Query, GROUPED_FROM};
use cuemem_core::CoreError;
use proptest::prelude::*;

const DIMS: [&str; 3] = ["actor", "type", "time"];
const VALUES: [&str; 4] = ["a", "b", "c", "d"];

/// (dimension, value, rows) writes.
fn writes() -> impl Strategy<Value = Vec<(usize, usize, Vec<u32>)>> {
    prop::collection::vec(
        (
            0..3usize,
            0..4usize,
            prop::collection::vec(0..300u32, 0..40),
        ),
        0..20,
    )
}

/// A query: per dimension, an optional non-empty set of values to include and to exclude.
fn queries() -> impl Strategy<Value = Vec<(usize, Vec<usize>, bool)>> {
    prop::collection::vec(
        (
            0..3usize,
            prop::collection::vec(0..4usize, 1..3),
            any::<bool>(),
        ),
        0..4,
    )
}

type Oracle = BTreeMap<(usize, usize), BTreeSet<u32>>;

/// Closed cue sets as (cues as (dimension, value) positions, supporting rows).
type ClosedSets = BTreeSet<(Vec<(usize, usize)>, Vec<u32>)>;

fn build(ws: &[(usize, usize, Vec<u32>)], removed: &[u32]) -> (CueIndex, Oracle, BTreeSet<u32>) {
    let mut index = CueIndex::new(&DIMS).unwrap();
    let mut oracle: Oracle = BTreeMap::new();
    let mut live = BTreeSet::new();
    for (d, v, rows) in ws {
        index.insert(DIMS[*d], VALUES[*v], rows).unwrap();
        oracle.entry((*d, *v)).or_default().extend(rows);
        live.extend(rows);
    }
    index.remove(removed);
    for set in oracle.values_mut() {
        for r in removed {
            set.remove(r);
        }
    }
    for r in removed {
        live.remove(r);
    }
    (index, oracle, live)
}

fn expected(
    oracle: &Oracle,
    live: &BTreeSet<u32>,
    q: &[(usize, Vec<usize>, bool)],
) -> BTreeSet<u32> {
    let mut out = live.clone();
    for (d, values, include) in q {
        let union: BTreeSet<u32> = values
            .iter()
            .flat_map(|v| oracle.get(&(*d, *v)).into_iter().flatten().copied())
            .collect();
        out = if *include {
            &out & &union
        } else {
            &out - &union
        };
    }
    out
}

fn to_query(q: &[(usize, Vec<usize>, bool)]) -> Query {
    let mut query = Query::new();
    for (d, values, include) in q {
        let vs = values.iter().map(|v| VALUES[*v]);
        query = if *include {
            query.with(DIMS[*d], vs)
        } else {
            query.without(DIMS[*d], vs)
        };
    }
    query
}

proptest! {
    #[test]
    fn prune_equals_oracle(ws in writes(), removed in prop::collection::vec(0..300u32, 0..30), q in queries()) {
        let (index, oracle, live) = build(&ws, &removed);
        let query = to_query(&q);
        let pruned = index.prune(&query).unwrap();
        let want = expected(&oracle, &live, &q);
        prop_assert_eq!(pruned.rows.iter().collect::<BTreeSet<_>>(), want.clone());
        prop_assert_eq!(pruned.full_scan, live.len() as u64);
        prop_assert_eq!(index.count(&query).unwrap(), want.len() as u64);
    }

    #[test]
    fn admits_agrees_with_prune_for_every_row(ws in writes(), removed in prop::collection::vec(0..300u32, 0..30), q in queries()) {
        let (index, oracle, live) = build(&ws, &removed);
        let want = expected(&oracle, &live, &q);
        let rows: Vec<u32> = (0..310).collect();
        let got = index.admits(&to_query(&q), &rows).unwrap();
        for (row, ok) in rows.iter().zip(got) {
            prop_assert_eq!(ok, want.contains(row), "row {}", row);
        }
    }

    #[test]
    fn withdraw_drops_rows_from_one_posting_only(ws in writes(), d in 0..3usize, v in 0..4usize, gone in prop::collection::vec(0..300u32, 0..40), q in queries()) {
        let (mut index, mut oracle, live) = build(&ws, &[]);
        index.withdraw(DIMS[d], VALUES[v], &gone).unwrap();
        if let Some(set) = oracle.get_mut(&(d, v)) {
            for r in &gone {
                set.remove(r);
            }
        }
        let got: BTreeSet<u32> = index.prune(&to_query(&q)).unwrap().rows.iter().collect();
        prop_assert_eq!(got, expected(&oracle, &live, &q));
        prop_assert_eq!(index.live().len() as usize, live.len());
    }

    #[test]
    fn single_cue_examines_exactly_its_list(ws in writes(), d in 0..3usize, v in 0..4usize) {
        let (index, oracle, _) = build(&ws, &[]);
        let pruned = index.prune(&Query::new().with(DIMS[d], [VALUES[v]])).unwrap();
        let len = oracle.get(&(d, v)).map_or(0, |s| s.len()) as u64;
        prop_assert_eq!(pruned.examined, len);
    }

    #[test]
    fn conjunction_examines_about_the_smallest_list(ws in writes(), v1 in 0..4usize, v2 in 0..4usize) {
        let (index, oracle, _) = build(&ws, &[]);
        let pruned = index.prune(&Query::new().with("actor", [VALUES[v1]]).with("type", [VALUES[v2]])).unwrap();
        let a = oracle.get(&(0, v1)).map_or(0, |s| s.len());
        let b = oracle.get(&(1, v2)).map_or(0, |s| s.len());
        prop_assert_eq!(pruned.examined, a.min(b) as u64);
    }

    #[test]
    fn save_load_round_trip_is_canonical(ws in writes(), removed in prop::collection::vec(0..300u32, 0..30)) {
        let (index, ..) = build(&ws, &removed);
        let bytes = index.to_bytes();
        let back = CueIndex::from_bytes(&bytes).unwrap();
        prop_assert_eq!(back.to_bytes(), bytes.clone());
        // the same postings written in reverse order serialize identically
        let mut reversed: Vec<_> = ws.clone();
        reversed.reverse();
        let (again, ..) = build(&reversed, &removed);
        prop_assert_eq!(again.to_bytes(), bytes);
    }

    #[test]
    fn damaged_bytes_never_panic(ws in writes(), at in any::<prop::sample::Index>(), bit in 0..8u8) {
        let (index, ..) = build(&ws, &[]);
        let mut bytes = index.to_bytes();
        let i = at.index(bytes.len());
        bytes[i] ^= 1 << bit;
        prop_assert!(CueIndex::from_bytes(&bytes).is_err());
    }
}

#[test]
fn every_truncation_is_a_typed_error() {
    let (index, ..) = build(&[(0, 0, vec![1, 2, 3]), (1, 2, vec![2, 70000])], &[]);
    let bytes = index.to_bytes();
    for cut in 0..bytes.len() {
        assert!(
            matches!(
                CueIndex::from_bytes(&bytes[..cut]),
                Err(CoreError::Corrupt(_))
            ),
            "cut {cut}"
        );
    }
}

#[test]
fn unknown_dimension_is_an_error_and_changes_nothing() {
    let (mut index, ..) = build(&[(0, 0, vec![1, 2, 3])], &[]);
    let before = index.to_bytes();
    assert!(matches!(
        index.insert("nope", "x", &[1]),
        Err(CoreError::UnknownDimension(_))
    ));
    assert!(matches!(
        index.prune(&Query::new().with("nope", ["x"])),
        Err(CoreError::UnknownDimension(_))
    ));
    assert!(index
        .insert_column("actor", &["x"], &[0, 1], &[5, 6])
        .is_err());
    assert!(index
        .insert_column("actor", &["x", ""], &[0, 1], &[5, 6])
        .is_err());
    assert_eq!(index.to_bytes(), before);
}

#[test]
fn posting_lists_are_portable_roaring() {
    // The portable format starts with the cookie 12346 (no runs) or 12347 (runs).
    let (index, ..) = build(&[(0, 0, vec![1, 2, 3])], &[]);
    let posting = index.posting("actor", "a").unwrap().unwrap();
    let mut buf = Vec::new();
    posting.serialize_into(&mut buf).unwrap();
    let cookie = u16::from_le_bytes([buf[0], buf[1]]);
    assert!(cookie == 12346 || cookie == 12347, "cookie {cookie}");
}

/// Every closed cue set with enough support in `within`, by brute force over all subsets
/// of the (at most 12) cues: a set is closed when no other cue has the same rows.
fn closed_by_brute_force(
    oracle: &Oracle,
    live: &BTreeSet<u32>,
    within: &BTreeSet<u32>,
    min_support: usize,
) -> ClosedSets {
    let within: BTreeSet<u32> = within & live;
    let cues: Vec<(usize, usize)> = oracle.keys().copied().collect();
    let rows_of = |set: &[(usize, usize)]| -> BTreeSet<u32> {
        let mut rows = within.clone();
        for c in set {
            rows = &rows & &oracle[c];
        }
        rows
    };
    let mut out = BTreeSet::new();
    for mask in 1u32..(1 << cues.len()) {
        let set: Vec<(usize, usize)> = (0..cues.len())
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| cues[i])
            .collect();
        let rows = rows_of(&set);
        if rows.len() < min_support {
            continue;
        }
        let closed = cues
            .iter()
            .filter(|c| !set.contains(c))
            .all(|c| !rows.is_subset(&oracle[c]));
        if closed {
            out.insert((set, rows.into_iter().collect()));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// closed_sets finds exactly the closed cue sets a brute force finds, with their
    /// supports and counter-examples.
    #[test]
    fn closed_sets_match_brute_force(
        ws in prop::collection::vec((0..3usize, 0..4usize, prop::collection::vec(0..24u32, 0..14)), 0..12),
        within in prop::collection::btree_set(0..24u32, 0..20),
        against in prop::collection::btree_set(0..24u32, 0..20),
        min_support in 1..4usize,
    ) {
        let (index, oracle, live) = build(&ws, &[]);
        let oracle: Oracle = oracle.into_iter().filter(|(_, rows)| !rows.is_empty()).collect();
        let within_bm: roaring::RoaringBitmap = within.iter().copied().collect();
        let against_bm: roaring::RoaringBitmap = against.iter().copied().collect();
        let mined = index.closed_sets(&DIMS, &within_bm, &against_bm, min_support as u64, 16).unwrap();
        let mut got = BTreeSet::new();
        for set in &mined.sets {
            let mut cues: Vec<(usize, usize)> = mined.cues_of(set).into_iter().map(|(d, v)| {
                (DIMS.iter().position(|x| *x == d).unwrap(), VALUES.iter().position(|x| *x == v).unwrap())
            }).collect();
            cues.sort();
            let counter: BTreeSet<u32> = cues.iter().fold(against.clone(), |acc, c| &acc & &oracle[c]);
            prop_assert_eq!(set.counter.iter().collect::<BTreeSet<u32>>(), counter);
            prop_assert!(got.insert((cues, set.support.iter().collect::<Vec<u32>>())), "a closed set came out twice");
        }
        prop_assert_eq!(got, closed_by_brute_force(&oracle, &live, &within, min_support));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// productive keeps exactly the sets with no kept proper subset at least as precise.
    #[test]
    fn productive_keeps_exactly_the_sets_that_explain_more(
        ws in prop::collection::vec((0..3usize, 0..4usize, prop::collection::vec(0..24u32, 0..14)), 0..12),
        within in prop::collection::btree_set(0..24u32, 0..20),
        against in prop::collection::btree_set(0..24u32, 0..20),
    ) {
        let (index, _, _) = build(&ws, &[]);
        let within_bm: roaring::RoaringBitmap = within.iter().copied().collect();
        let against_bm: roaring::RoaringBitmap = against.iter().copied().collect();
        let all = index.closed_sets(&DIMS, &within_bm, &against_bm, 1, 16).unwrap();
        let precision = |s: &cuemem_core::cue::CueSet| s.support.len() as f64 / (s.support.len() + s.counter.len()) as f64;
        let kept = all.clone().productive();
        let kept_sets: Vec<(BTreeSet<u32>, f64)> = kept.sets.iter().map(|s| (s.cues.iter().copied().collect(), precision(s))).collect();
        let mut sorted = all.sets.clone();
        sorted.sort_by(|a, b| (a.cues.len(), &a.cues).cmp(&(b.cues.len(), &b.cues)));
        let mut expect: Vec<(BTreeSet<u32>, f64)> = Vec::new();
        for s in &sorted {
            let cues: BTreeSet<u32> = s.cues.iter().copied().collect();
            let p = precision(s);
            if !expect.iter().any(|(k, q)| k.len() < cues.len() && k.is_subset(&cues) && *q >= p) {
                expect.push((cues, p));
            }
        }
        prop_assert_eq!(kept_sets, expect);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// insert_rows leaves the index a column insert per dimension leaves, to the byte, over
    /// an index already written to: a few rows' cues straight to their postings, a batch of
    /// `GROUPED_FROM` rows or more gathered by posting first.
    #[test]
    fn inserting_rows_equals_inserting_each_dimensions_column(
        ws in writes(),
        rows in prop::collection::vec(prop::collection::vec((0..3u16, 0..4usize), 0..6), 0..(3 * GROUPED_FROM)),
        first in 0..400u32,
    ) {
        let (mut by_rows, _, _) = build(&ws, &[]);
        let (mut by_columns, _, _) = build(&ws, &[]);
        let cues: Vec<Vec<(u16, String)>> = rows
            .iter()
            .map(|row| row.iter().map(|&(d, v)| (d, VALUES[v].to_string())).collect())
            .collect();
        let slices: Vec<&[(u16, String)]> = cues.iter().map(Vec::as_slice).collect();
        by_rows.insert_rows(&DIMS, &slices, first).unwrap();
        for (d, name) in DIMS.iter().enumerate() {
            let mut values = Vec::new();
            let mut at = Vec::new();
            for (i, row) in cues.iter().enumerate() {
                for (dim, v) in row {
                    if *dim as usize == d {
                        values.push(v.as_str());
                        at.push(first + i as u32);
                    }
                }
            }
            if !values.is_empty() {
                by_columns.insert_values(name, &values, &at).unwrap();
            }
        }
        prop_assert_eq!(by_rows.to_bytes(), by_columns.to_bytes());
    }
}

#[test]
fn inserting_rows_checks_everything_before_changing_anything() {
    let mut index = CueIndex::new(&DIMS).unwrap();
    index.insert("actor", "a", &[1]).unwrap();
    let before = index.to_bytes();
    let good = [(0u16, "b".to_string())];
    let past = [(3u16, "c".to_string())];
    let empty = [(1u16, String::new())];
    assert!(matches!(
        index.insert_rows(&DIMS, &[&good, &past], 5),
        Err(CoreError::InvalidArgument { .. })
    ));
    assert!(matches!(
        index.insert_rows(&DIMS, &[&good, &empty], 5),
        Err(CoreError::InvalidValue { .. })
    ));
    assert!(matches!(
        index.insert_rows(&["actor", "nope"], &[&good], 5),
        Err(CoreError::UnknownDimension(_))
    ));
    assert_eq!(index.to_bytes(), before);
}
