//! Decoded rows and the stores their strings, cues, axes and lists live in.
//!
//! A row owns nothing: it holds spans of a [`Store`] (the strings end to end, the rows'
//! cues, axes and string lists one after another), one store for each piece of the run
//! decoded apart, so decoding a line allocates nothing of its own and dropping a run
//! frees a handful of buffers, not a dozen per row. [`RowRef`] reads a row through its store.

use std::collections::HashSet;

use super::rules;

/// Bytes, or items, `.0 .. .1` of a store's buffer.
pub(super) type Span = (usize, usize);

/// Where the rows of a run keep what they hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Store {
    /// The rows' strings, end to end.
    text: String,
    /// `(cue dimension, value in text)`.
    cues: Vec<(u16, Span)>,
    axes: Vec<f32>,
    /// The strings of the rows' lists (sources, tracked values), as spans of text.
    items: Vec<Span>,
}

/// How far each buffer of a store reached: what a line that is not kept gives back.
#[derive(Clone, Copy)]
pub(super) struct Mark([usize; 4]);

impl Store {
    pub(super) fn mark(&self) -> Mark {
        Mark([
            self.text.len(),
            self.cues.len(),
            self.axes.len(),
            self.items.len(),
        ])
    }

    /// Drops what was added since `mark`.
    pub(super) fn rewind(&mut self, Mark([text, cues, axes, items]): Mark) {
        self.text.truncate(text);
        self.cues.truncate(cues);
        self.axes.truncate(axes);
        self.items.truncate(items);
    }

    /// The string at `span` of its text.
    pub(super) fn text(&self, (a, b): Span) -> &str {
        &self.text[a..b]
    }

    /// Appends `s` to the text: where it sits.
    pub(super) fn put(&mut self, s: &str) -> Span {
        let from = self.text.len();
        self.text.push_str(s);
        (from, self.text.len())
    }

    /// Adds `value` as a cue of dimension `d`: folded, and only once among the cues from
    /// item `first` on, when `folded`. `None` when the core cannot be sure of its fold.
    pub(super) fn cue(&mut self, d: u16, value: &str, folded: bool, first: usize) -> Option<()> {
        if !folded {
            let span = self.put(value);
            self.cues.push((d, span));
            return Some(());
        }
        let from = self.text.len();
        rules::fold_into(value, &mut self.text)?;
        let fold = &self.text[from..];
        if self.cues[first..]
            .iter()
            .any(|&(_, (a, b))| &self.text[a..b] == fold)
        {
            self.text.truncate(from);
        } else {
            self.cues.push((d, (from, self.text.len())));
        }
        Some(())
    }

    /// Adds `values` as cues of dimension `d`, each as [`Store::cue`] adds one: folded, and
    /// each fold once, when `folded` (a long list's folds looked up in a set, not among
    /// every fold before it). `None` when the core cannot be sure of a fold.
    pub(super) fn cue_list<S: AsRef<str>>(
        &mut self,
        d: u16,
        values: &[S],
        folded: bool,
    ) -> Option<()> {
        let first = self.cues.len();
        if !folded || values.len() <= rules::FEW_VALUES {
            for v in values {
                self.cue(d, v.as_ref(), folded, first)?;
            }
            return Some(());
        }
        let mut seen = HashSet::with_capacity(values.len());
        let mut fold = String::new();
        for v in values {
            fold.clear();
            rules::fold_into(v.as_ref(), &mut fold)?;
            if seen.insert(fold.clone()) {
                let span = self.put(&fold);
                self.cues.push((d, span));
            }
        }
        Some(())
    }

    /// How many cues it holds.
    pub(super) fn cue_count(&self) -> usize {
        self.cues.len()
    }

    pub(super) fn axes(&mut self, axes: impl Iterator<Item = f32>) -> Span {
        let from = self.axes.len();
        self.axes.extend(axes);
        (from, self.axes.len())
    }

    /// Puts what `row` holds but its narrative (left empty): the same row, read through this store.
    pub(super) fn copy(&mut self, row: RowRef<'_>) -> Row {
        let id = self.put(row.id());
        let from = self.cues.len();
        for (d, value) in row.cues() {
            let span = self.put(value);
            self.cues.push((d, span));
        }
        let cues = (from, self.cues.len());
        let axes = self.axes(row.axes().iter().copied());
        let sources = self.list(row.sources());
        let tracked = row.tracked().map(|kept| self.list(kept));
        Row {
            id,
            narrative: (0, 0),
            cues,
            axes,
            sources,
            tracked,
            piece: 0,
            ..*row.row
        }
    }

    /// Puts each string of `items` and lists them: the list's span of items.
    pub(super) fn list<'s>(&mut self, items: impl Iterator<Item = &'s str>) -> Span {
        let from = self.items.len();
        for s in items {
            let span = self.put(s);
            self.items.push(span);
        }
        (from, self.items.len())
    }
}

/// One proven episode, as the indexes take it, read through a [`RowRef`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Row {
    pub(super) id: Span,
    pub(super) narrative: Span,
    /// Items of the store's cues.
    pub(super) cues: Span,
    /// Items of the store's axes.
    pub(super) axes: Span,
    /// Items of the store's lists.
    pub(super) sources: Span,
    pub(super) tracked: Option<Span>,
    /// The store it reads: the piece of the run it was decoded in.
    pub(super) piece: u32,
    pub(super) confidence: f32,
    /// The reference time: midnight UTC of the day it occurred, in seconds since the epoch.
    pub(super) t: f64,
    /// Byte range of the line in the run (its `\n` included).
    pub(super) start: usize,
    pub(super) end: usize,
}

/// A row and the store it reads.
#[derive(Clone, Copy, Debug)]
pub struct RowRef<'d> {
    pub(super) store: &'d Store,
    pub(super) row: &'d Row,
}

impl<'d> RowRef<'d> {
    fn text(&self, (a, b): Span) -> &'d str {
        &self.store.text[a..b]
    }

    fn list(&self, (a, b): Span) -> impl ExactSizeIterator<Item = &'d str> + use<'d> {
        let store = self.store;
        store.items[a..b].iter().map(|&(x, y)| &store.text[x..y])
    }

    pub fn id(&self) -> &'d str {
        self.text(self.row.id)
    }

    pub fn narrative(&self) -> &'d str {
        self.text(self.row.narrative)
    }

    /// `(cue dimension, value)`, dimensions by their place in the schema's cues.
    pub fn cues(&self) -> impl ExactSizeIterator<Item = (u16, &'d str)> + use<'d> {
        let store = self.store;
        let (a, b) = self.row.cues;
        store.cues[a..b]
            .iter()
            .map(|&(d, (x, y))| (d, &store.text[x..y]))
    }

    /// The salience axes, in the schema's order.
    pub fn axes(&self) -> &'d [f32] {
        let (a, b) = self.row.axes;
        &self.store.axes[a..b]
    }

    /// The ids of the episodes it cites.
    pub fn sources(&self) -> impl ExactSizeIterator<Item = &'d str> + use<'d> {
        self.list(self.row.sources)
    }

    /// The kept fields' values (as strings), if the decoder was asked to track this row.
    pub fn tracked(&self) -> Option<impl ExactSizeIterator<Item = &'d str> + use<'d>> {
        Some(self.list(self.row.tracked?))
    }

    pub fn confidence(&self) -> f32 {
        self.row.confidence
    }

    pub fn t(&self) -> f64 {
        self.row.t
    }

    pub fn start(&self) -> usize {
        self.row.start
    }

    pub fn end(&self) -> usize {
        self.row.end
    }
}
