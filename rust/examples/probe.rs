use cuemem_core::cue::{CueIndex, Query};
use cuemem_core::salience::{Params, SalienceTable};
use std::time::Instant;
fn main() {
    let n = 1_000_000u32;
    let mut tab = SalienceTable::new(Params::default());
    let rows: Vec<u32> = (0..n).collect();
    let axes: Vec<f32> = (0..n as usize * 7).map(|i| ((i * 2654435761usize) % 1000) as f32 / 1700.0).collect();
    let conf = vec![0.8f32; n as usize];
    let times: Vec<f64> = (0..n).map(|i| 1.7e9 + (i as f64 / n as f64) * 1095.0 * 86400.0).collect();
    let t = Instant::now();
    tab.put(&rows, &axes, &conf, &times).unwrap();
    println!("put {:?}", t.elapsed());
    let now = 1.7e9 + 1100.0 * 86400.0;
    for _ in 0..3 {
        let t = Instant::now();
        let (_, p) = tab.decay_pass(now, 0.35).unwrap();
        println!("pass {:?} below {}", t.elapsed(), p.below.len());
    }
    let mut out = vec![0f32; n as usize * 7];
    for _ in 0..5 {
        let t = Instant::now();
        let p = tab.decay_pass_into(now, 0.35, &mut out).unwrap();
        println!("pass_into {:?} below {}", t.elapsed(), p.below.len());
    }
    let all: roaring::RoaringBitmap = (0..n).step_by(16).collect();
    for _ in 0..3 {
        let t = Instant::now();
        let s: u64 = all.iter().map(|x| x as u64).sum();
        println!("iter only {:?} {s}", t.elapsed());
    }
    let mut idx = CueIndex::new(&["a"]).unwrap();
    let cand: Vec<u32> = (0..n).step_by(16).collect();
    idx.insert("a", "x", &cand).unwrap();
    let q = Query::new().with("a", ["x"]);
    for _ in 0..3 {
        let t = Instant::now();
        let p = idx.prune(&q).unwrap();
        let e1 = t.elapsed();
        let top = tab.top_k(p.rows.iter(), p.rows.max(), now, 10).unwrap();
        println!("prune {:?} topk total {:?} {}", e1, t.elapsed(), top.rows.len());
    }
}
#[allow(dead_code)]
fn extra() {}
