//! Times the core's kernels on a million synthetic rows, without Python.
//!
//! ```text
//! cargo run --release --example kernels
//! ```
//!
//! Prints the time to write the salience table, the full decay pass (fresh output
//! and reused output), and cue pruning plus top-k for a sparse and a dense cue.
//! Comparisons against the baselines a user would pick live in `cuemem bench`.

use std::time::{Duration, Instant};

use cuemem_core::cue::{CueIndex, Query};
use cuemem_core::salience::{Params, SalienceTable, DAY};

const N: u32 = 1_000_000;

/// A cheap deterministic hash for synthetic values.
fn mix(i: u64) -> u64 {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 31;
    x.wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn time<T>(repeats: usize, mut f: impl FnMut() -> T) -> Duration {
    median(
        (0..repeats)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(f());
                t.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let rows: Vec<u32> = (0..N).collect();
    let axes: Vec<f32> = (0..N as u64 * 7)
        .map(|i| (mix(i) % 1000) as f32 / 1600.0)
        .collect();
    let confidence: Vec<f32> = (0..N as u64)
        .map(|i| 0.5 + (mix(i + 7) % 500) as f32 / 1000.0)
        .collect();
    let start = 1.7e9;
    let times: Vec<f64> = (0..N)
        .map(|i| start + i as f64 / N as f64 * 1095.0 * DAY)
        .collect();
    let now = start + 1096.0 * DAY;

    let mut table = SalienceTable::new(Params::default());
    let t = Instant::now();
    table
        .put(&rows, &axes, &confidence, &times)
        .expect("valid rows");
    println!("put {N} rows: {:?}", t.elapsed());

    println!(
        "decay pass, fresh output: {:?}",
        time(5, || table
            .decay_pass(now, 0.35)
            .expect("valid")
            .1
            .below
            .len())
    );
    let mut out = vec![0f32; N as usize * 7];
    println!(
        "decay pass, reused output: {:?}",
        time(5, || table
            .decay_pass_into(now, 0.35, &mut out)
            .expect("valid")
            .below
            .len())
    );

    let mut index = CueIndex::new(&["actor", "year"]).expect("distinct dimensions");
    let sparse: Vec<u32> = (0..N)
        .filter(|&i| mix(i as u64 + 99).is_multiple_of(700))
        .collect();
    index
        .insert("actor", "rare", &sparse)
        .expect("known dimension");
    let dense: Vec<u32> = (N / 3..2 * N / 3).collect();
    index
        .insert("year", "2025", &dense)
        .expect("known dimension");
    for (name, query) in [
        ("sparse cue", Query::new().with("actor", ["rare"])),
        ("dense cue", Query::new().with("year", ["2025"])),
    ] {
        let pruned = index.prune(&query).expect("known dimensions");
        let took = time(21, || {
            let p = index.prune(&query).expect("known dimensions");
            table
                .top_k_bitmap(&p.rows, now, 10)
                .expect("valid")
                .rows
                .len()
        });
        println!(
            "{name}: {} candidates, prune + top-10 {:?}",
            pruned.rows.len(),
            took
        );
    }
}
