//! Property tests of the salience table: block-max top-k equals the plain scan.

use cuemem_core::salience::{Params, SalienceTable, DAY};
use proptest::prelude::*;
use roaring::RoaringBitmap;

/// Rows: (axes, confidence, day written) with coarse values so that ties happen.
fn rows() -> impl Strategy<Value = Vec<([u8; 7], u8, u16)>> {
    prop::collection::vec(
        (prop::array::uniform7(0..=10u8), 0..=4u8, 0..400u16),
        1..600,
    )
}

fn table(rows: &[([u8; 7], u8, u16)]) -> SalienceTable {
    let mut tab = SalienceTable::new(Params::default());
    // written in two batches far apart in time, so rows fall in different epochs
    for (half, chunk) in rows.chunks(rows.len().div_ceil(2)).enumerate() {
        let start = if half == 0 { 0 } else { rows.len().div_ceil(2) } as u32;
        let ids: Vec<u32> = (start..start + chunk.len() as u32).collect();
        let axes: Vec<f32> = chunk
            .iter()
            .flat_map(|(a, ..)| a.map(|x| x as f32 / 10.0))
            .collect();
        let conf: Vec<f32> = chunk.iter().map(|(_, c, _)| *c as f32 / 4.0).collect();
        let times: Vec<f64> = chunk.iter().map(|(.., d)| *d as f64 * DAY).collect();
        tab.put(&ids, &axes, &conf, &times).unwrap();
    }
    tab
}

proptest! {
    #[test]
    fn block_max_top_k_equals_scan(
        rs in rows(),
        pick in prop::collection::vec(0..10u8, 600),
        density in 1..=10u8,
        removed in prop::collection::vec(0..600u32, 0..20),
        now_day in 0..1200u16,
        k in 1..15usize,
    ) {
        let mut tab = table(&rs);
        let n = rs.len() as u32;
        let removed: Vec<u32> = removed.into_iter().filter(|r| *r < n).collect();
        tab.remove(&removed);
        // from one candidate in ten rows (the scan and stepping paths) to all (seeking)
        let cands: RoaringBitmap = (0..n).filter(|&r| pick[r as usize] < density).collect();
        let now = now_day as f64 * DAY;
        let scan = tab.top_k(cands.iter(), cands.max(), now, k).unwrap();
        let fast = tab.top_k_bitmap(&cands, now, k).unwrap();
        prop_assert_eq!(&fast.rows, &scan.rows);
        prop_assert_eq!(&fast.scores, &scan.scores);
        prop_assert_eq!(fast.breakdown, scan.breakdown);
    }

    #[test]
    fn save_load_keeps_scores(rs in rows(), now_day in 0..800u16) {
        let tab = table(&rs);
        let back = SalienceTable::from_bytes(&tab.to_bytes()).unwrap();
        let all: Vec<u32> = (0..rs.len() as u32).collect();
        let now = now_day as f64 * DAY;
        prop_assert_eq!(back.composite(&all, now).unwrap(), tab.composite(&all, now).unwrap());
        let cands: RoaringBitmap = all.iter().copied().collect();
        prop_assert_eq!(back.top_k_bitmap(&cands, now, 5).unwrap(), tab.top_k_bitmap(&cands, now, 5).unwrap());
    }

    #[test]
    fn damaged_table_bytes_never_panic(rs in rows(), at in any::<prop::sample::Index>(), bit in 0..8u8) {
        let mut bytes = table(&rs).to_bytes();
        let i = at.index(bytes.len());
        bytes[i] ^= 1 << bit;
        prop_assert!(SalienceTable::from_bytes(&bytes).is_err());
    }
}

#[test]
fn every_truncation_of_a_table_is_an_error() {
    let bytes = table(&[([5; 7], 2, 3), ([9; 7], 4, 10)]).to_bytes();
    for cut in 0..bytes.len() {
        assert!(
            SalienceTable::from_bytes(&bytes[..cut]).is_err(),
            "cut {cut}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn block_max_top_k_equals_scan_across_chunks(
        rs in prop::collection::vec((prop::array::uniform7(0..=10u8), 0..=4u8, 0..1500u16), 2000..5000),
        stride in 1..12usize,
        now_extra in 0..300u16,
        k in 1..20usize,
    ) {
        let tab = table(&rs);
        let n = rs.len() as u32;
        let cands: RoaringBitmap = (0..n).step_by(stride).collect();
        let now = (1500 + now_extra) as f64 * DAY;
        let scan = tab.top_k(cands.iter(), cands.max(), now, k).unwrap();
        let fast = tab.top_k_bitmap(&cands, now, k).unwrap();
        prop_assert_eq!(&fast.rows, &scan.rows);
        prop_assert_eq!(&fast.scores, &scan.scores);
    }
}
