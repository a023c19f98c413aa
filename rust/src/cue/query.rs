//! What a recall asks of the cue index, and what pruning returns.

use roaring::RoaringBitmap;

/// One dimension and the values accepted (or excluded) in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    pub dimension: String,
    pub values: Vec<String>,
}

/// A conjunction across dimensions of unions within a dimension, minus exclusions.
///
/// ```
/// use cuemem_core::cue::Query;
/// let q = Query::new().with("actor", ["acme", "globex"]).with("time", ["2026-06"]).without("outcome", ["negative"]);
/// assert_eq!(q.include.len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    pub include: Vec<Clause>,
    pub exclude: Vec<Clause>,
}

impl Query {
    pub fn new() -> Self {
        Self::default()
    }

    /// Requires one of `values` in `dimension`.
    pub fn with<S: Into<String>>(
        mut self,
        dimension: &str,
        values: impl IntoIterator<Item = S>,
    ) -> Self {
        self.include.push(Clause {
            dimension: dimension.into(),
            values: values.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// Drops rows carrying any of `values` in `dimension`.
    pub fn without<S: Into<String>>(
        mut self,
        dimension: &str,
        values: impl IntoIterator<Item = S>,
    ) -> Self {
        self.exclude.push(Clause {
            dimension: dimension.into(),
            values: values.into_iter().map(Into::into).collect(),
        });
        self
    }
}

/// The rows a query leaves, with the work it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Pruned {
    pub rows: RoaringBitmap,
    /// Postings the plan touched.
    pub examined: u64,
    /// Live rows: what a full scan would have visited.
    pub full_scan: u64,
}
