//! Decoded rows into the indexes, without leaving the core.

use crate::cue::CueIndex;
use crate::error::Result;
use crate::salience::SalienceTable;
use crate::text::TextIndex;

use super::rows::RowRef;

/// Adds the cues of `rows` as rows `first ..` of `index`; `dimensions` names the
/// schema's cue dimensions in order.
///
/// # Errors
/// What [`CueIndex::insert_rows`] reports (an unknown dimension); the index is then as it was.
pub fn index_cues<S: AsRef<str>>(
    index: &mut CueIndex,
    dimensions: &[S],
    rows: &[RowRef<'_>],
    first: u32,
) -> Result<()> {
    // Every row's cues end to end, then each row's share of them.
    let all: Vec<(u16, &str)> = rows.iter().flat_map(RowRef::cues).collect();
    let mut cues: Vec<&[(u16, &str)]> = Vec::with_capacity(rows.len());
    let mut at = 0;
    for row in rows {
        let n = row.cues().len();
        cues.push(&all[at..at + n]);
        at += n;
    }
    index.insert_rows(dimensions, &cues, first)
}

/// Puts the axes, confidence and reference time of `rows` as rows `first ..` of `table`.
///
/// # Errors
/// What [`SalienceTable::put`] reports.
pub fn put_salience(table: &mut SalienceTable, rows: &[RowRef<'_>], first: u32) -> Result<()> {
    let numbers: Vec<u32> = (0..rows.len() as u32).map(|i| first + i).collect();
    let axes: Vec<f32> = rows.iter().flat_map(|r| r.axes().iter().copied()).collect();
    let confidence: Vec<f32> = rows.iter().map(RowRef::confidence).collect();
    let times: Vec<f64> = rows.iter().map(RowRef::t).collect();
    table.put(&numbers, &axes, &confidence, &times)
}

/// Adds the narratives of `rows` as documents of rows `first ..` of `text`.
///
/// # Errors
/// What [`TextIndex::add`] reports.
pub fn add_texts(text: &mut TextIndex, rows: &[RowRef<'_>], first: u32) -> Result<()> {
    let numbers: Vec<u32> = (0..rows.len() as u32).map(|i| first + i).collect();
    let texts: Vec<&str> = rows.iter().map(RowRef::narrative).collect();
    text.add(&numbers, &texts)
}
