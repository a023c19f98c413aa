//! The text index: BM25 over episode narratives, one tantivy document per home row.
//!
//! Each document holds the analyzed narrative and, in a fast field, the row it
//! belongs to, so text scores meet cue candidates (a roaring bitmap of rows) and the
//! salience table without leaving the core. [`TextIndex::search`] returns the best
//! rows by BM25, optionally among candidates, by one of two exact plans:
//!
//! - **scan**: the query's posting lists are walked with block-max WAND pruning,
//!   candidates filtered by their row as documents are met;
//! - **seek**: for a candidate set far smaller than the postings, each candidate's
//!   document is looked up and scored by skipping through the postings to it.
//!
//! Both give the same rows and scores; ties go to the later row (the newer memory), so the
//! result depends only on the indexed texts and the query. BM25 statistics (document
//! frequencies, average length) are those of the whole index, whatever its segments.
//!
//! Documents added since the last commit are searched too, in memory ([`Tail`]), with
//! the statistics of the committed segments and the tail together: a search answers the
//! same before a commit as after it.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use roaring::RoaringBitmap;
use tantivy::directory::{Directory, MmapDirectory};
use tantivy::index::SegmentId;
use tantivy::indexer::UserOperation;
use tantivy::query::{Bm25Weight, BooleanQuery, EnableScoring, Occur, Query, TermQuery, Weight};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{
    DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, SegmentReader,
    TantivyDocument, TantivyError, Term,
};

use super::erase::RowsQuery;
use super::fault::tantivy_error;
use super::readonly::ReaderDirectory;
use super::tail::{Corpus, Tail};
use super::tokenize::{terms, Analyzer};
use crate::error::{CoreError, Result, TextFault};
use crate::rank::Kept;

/// A candidate costs about this many posting entries to seek to; the seek plan is
/// chosen when the candidates cost less than walking the query's postings.
const SEEK_COST: u64 = 32;

/// Indexing memory of the writer, shared by its threads.
const WRITER_BYTES: usize = 96 << 20;

/// Documents added a few at a time (a live write's) wait until this many are queued, and
/// are handed to the writer's indexing threads as one batch (and before any commit or
/// deletion): each hand-over wakes a thread, which one document at a time paid per write.
/// Until then the tail searches them. A call of this many or more hands them over one by one.
const HANDOFF: usize = 256;

/// How [`TextIndex::search`] meets candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Seek when the candidates are few against the postings, scan otherwise.
    Auto,
    /// Walk the postings, filtering by row.
    Scan,
    /// Look up each candidate's document.
    Seek,
}

/// Rows of one segment: the set, and (row, document) pairs sorted by row.
struct SegmentRows {
    rows: RoaringBitmap,
    by_row: Vec<(u32, u32)>,
}

/// The best `limit` (row, score) pairs seen, ties to the later row ([`Kept`]'s order).
struct Top {
    limit: usize,
    heap: BinaryHeap<Kept>,
}

impl Top {
    fn new(limit: usize) -> Self {
        Top {
            limit,
            heap: BinaryHeap::with_capacity(limit.min(1 << 16) + 1),
        }
    }

    fn push(&mut self, row: u32, score: f32) {
        let r = Kept { score, row };
        if self.heap.len() < self.limit {
            self.heap.push(r);
        } else if self.heap.peek().is_some_and(|worst| r < *worst) {
            self.heap.pop();
            self.heap.push(r);
        }
    }

    /// Scores at or below this cannot enter (just under the worst kept, so ties enter).
    fn threshold(&self) -> f32 {
        match self.heap.peek() {
            Some(worst) if self.heap.len() >= self.limit && worst.score > 0.0 => {
                f32::from_bits(worst.score.to_bits() - 1)
            }
            _ => f32::MIN,
        }
    }

    fn into_sorted(self) -> Vec<(u32, f32)> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|r| (r.row, r.score))
            .collect()
    }
}

/// The file, beside the segments, that remembers which files were last verified.
const VERIFIED: &str = ".cuemem-verified";

/// A file's size and modification time, in nanoseconds: what makes a check of it stale.
fn stamp(path: &Path) -> Option<(u64, u128)> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some((meta.len(), mtime))
}

/// The verified files as last recorded: name -> stamp (empty when the record is missing or torn).
fn read_verified(dir: &Path) -> HashMap<String, (u64, u128)> {
    let Ok(text) = std::fs::read_to_string(dir.join(VERIFIED)) else {
        return HashMap::new();
    };
    let mut out = HashMap::new();
    for line in text.lines() {
        let mut parts = line.split('\t');
        let (Some(name), Some(len), Some(mtime), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return HashMap::new();
        };
        let (Ok(len), Ok(mtime)) = (len.parse(), mtime.parse()) else {
            return HashMap::new();
        };
        out.insert(name.to_owned(), (len, mtime));
    }
    out
}

/// The files of the index's searchable segments (those its directory manages), sorted.
fn segment_files(index: &Index) -> tantivy::Result<Vec<PathBuf>> {
    let managed = index.directory().list_managed_files();
    let mut files: Vec<PathBuf> = index
        .searchable_segment_metas()?
        .iter()
        .flat_map(|m| m.list_files())
        .filter(|p| managed.contains(p))
        .collect();
    files.sort_unstable();
    files.dedup();
    Ok(files)
}

/// What has been proven of the segment files: each one's stamp when its checksum last
/// held. A file is read and checked again only when its stamp changes, so an open
/// costs a stat per file already proven (by this handle or, through the record a
/// writer keeps beside the segments, by an earlier one), and a search a stat per file
/// to notice a file changed under the open handle. (`meta.json` has no checksum: it is
/// JSON, and bad JSON fails [`Index::open`].)
struct Proof {
    dir: PathBuf,
    known: HashMap<String, (u64, u128)>,
    files: Vec<(PathBuf, String)>,
}

impl Proof {
    fn load(dir: &Path) -> Self {
        Proof {
            dir: dir.to_path_buf(),
            known: read_verified(dir),
            files: Vec::new(),
        }
    }

    /// Checks the current segments' files not proven at their stamp; the damaged ones, named.
    fn check(&mut self, index: &Index) -> tantivy::Result<Option<String>> {
        let files = segment_files(index)?;
        let mut damaged = Vec::new();
        let mut known = HashMap::with_capacity(files.len());
        for path in &files {
            let name = path.display().to_string();
            let now = stamp(&self.dir.join(path));
            if (now.is_none() || self.known.get(&name).copied() != now)
                && !index.directory().validate_checksum(path)?
            {
                damaged.push(name);
                continue;
            }
            if let Some(now) = now {
                known.insert(name, now);
            }
        }
        self.known = known;
        self.files = files
            .into_iter()
            .map(|p| {
                let name = p.display().to_string();
                (p, name)
            })
            .collect();
        if damaged.is_empty() {
            return Ok(None);
        }
        damaged.sort_unstable();
        Ok(Some(format!("checksum mismatch in {}", damaged.join(", "))))
    }

    /// Whether every current file still has the stamp it was proven at (a stat each;
    /// a file a writer has since deleted is not looked at again).
    fn holds(&self) -> bool {
        self.files
            .iter()
            .all(|(path, name)| match self.known.get(name) {
                Some(k) => stamp(&self.dir.join(path)).as_ref() == Some(k),
                None => true,
            })
    }

    /// Checks again the files of the segments this handle searches whose stamp changed:
    /// a file changed in place is damage (tantivy never rewrites one); a file a writer
    /// deleted is checked through the mapping this handle still holds, when it has one.
    fn recheck(&mut self, index: &Index) -> Option<String> {
        let mut damaged = Vec::new();
        for (path, name) in &self.files {
            let Some(&proven) = self.known.get(name) else {
                continue;
            };
            let now = stamp(&self.dir.join(path));
            if now == Some(proven) {
                continue;
            }
            match index.directory().validate_checksum(path) {
                Ok(true) => match now {
                    Some(now) => {
                        self.known.insert(name.clone(), now);
                    }
                    None => {
                        self.known.remove(name);
                    }
                },
                Ok(false) => damaged.push(name.clone()),
                Err(_) => {
                    self.known.remove(name); // gone, and no mapping of it here: nothing left to read
                }
            }
        }
        if damaged.is_empty() {
            return None;
        }
        damaged.sort_unstable();
        Some(format!(
            "checksum mismatch in {} (changed under the open index)",
            damaged.join(", ")
        ))
    }

    /// Records what is proven beside the segments; losing the record costs a full check next time.
    fn save(&self) {
        let mut body = String::new();
        for (_, name) in &self.files {
            if let Some((len, mtime)) = self.known.get(name) {
                body.push_str(&format!("{name}\t{len}\t{mtime}\n"));
            }
        }
        let tmp = self.dir.join(format!("{VERIFIED}.tmp"));
        if std::fs::write(&tmp, body).is_ok() {
            let _ = std::fs::rename(&tmp, self.dir.join(VERIFIED));
        }
    }
}

/// BM25 over row texts, stored in a directory; see the module docs.
pub struct TextIndex {
    index: Index,
    reader: IndexReader,
    writer: Option<IndexWriter>,
    body: Field,
    row: Field,
    analyzer: Analyzer,
    pending: u64,
    /// Added documents not yet handed to the writer (fewer than [`HANDOFF`]).
    queued: Vec<TantivyDocument>,
    tail: Tail,
    segments: Mutex<HashMap<SegmentId, Arc<SegmentRows>>>,
    proof: Mutex<Proof>,
}

/// What a write to an index opened read-only is.
fn read_only() -> CoreError {
    CoreError::InvalidArgument {
        name: "text index",
        reason: "opened read-only".into(),
    }
}

fn schema(analyzer: Analyzer) -> (Schema, Field, Field) {
    let mut b = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(analyzer.name())
        .set_index_option(IndexRecordOption::WithFreqs);
    let body = b.add_text_field(
        "body",
        TextOptions::default().set_indexing_options(indexing),
    );
    let row = b.add_u64_field("row", FAST);
    (b.build(), body, row)
}

impl TextIndex {
    /// Opens the index in `dir`, creating it (and `dir`) when absent and `writable`.
    ///
    /// An existing index is verified first, read-only or not: every file of its
    /// segments must match the checksum in its footer (one sequential read of the
    /// index, like the load of the cue index and salience table beside it).
    ///
    /// Errors: [`CoreError::Io`] when the directory cannot be used (or holds no index
    /// and is not `writable`); [`CoreError::TextIndex`] with [`TextFault::Corrupt`]
    /// when it holds an index of another schema or damaged files,
    /// [`TextFault::Incompatible`] when its format is not this build's, and
    /// [`TextFault::Locked`] when `writable` and another writer holds its lock.
    pub fn open(dir: &Path, analyzer: Analyzer, writable: bool) -> Result<Self> {
        if writable {
            std::fs::create_dir_all(dir)?;
        }
        // The directory's errors name only files inside it: say which index it is.
        let here = |e: TantivyError| match tantivy_error(e) {
            CoreError::TextIndex { fault, detail } => CoreError::TextIndex {
                fault,
                detail: format!("{}: {detail}", dir.display()),
            },
            other => other,
        };
        let mmap = MmapDirectory::open(dir).map_err(|e| here(e.into()))?;
        let (expected, body, row) = schema(analyzer);
        let exists = Index::exists(&mmap).map_err(|e| here(e.into()))?;
        // A reader must work where it cannot write (a read-only mount): no lock files.
        let directory: Box<dyn Directory> = if writable {
            Box::new(mmap)
        } else {
            Box::new(ReaderDirectory(mmap))
        };
        let index = if exists {
            let index = Index::open(directory).map_err(here)?;
            if index.schema() != expected {
                return Err(CoreError::TextIndex {
                    fault: TextFault::Corrupt,
                    detail: format!("{} holds an index of another schema", dir.display()),
                });
            }
            index
        } else if writable {
            Index::create(directory, expected, Default::default()).map_err(here)?
        } else {
            return Err(CoreError::Io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no text index in {}", dir.display()),
            )));
        };
        // Before any segment is opened: tantivy trusts its segment bytes, and a
        // flipped byte there is a panic, or a wrong answer, far from here.
        let mut proof = Proof::load(dir);
        if let Some(damaged) = proof.check(&index).map_err(here)? {
            return Err(CoreError::TextIndex {
                fault: TextFault::Corrupt,
                detail: format!("{}: {damaged}", dir.display()),
            });
        }
        if writable {
            proof.save();
        }
        index
            .tokenizers()
            .register(analyzer.name(), analyzer.for_documents());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(here)?;
        let writer = if writable {
            let threads = std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .clamp(1, 2);
            Some(
                index
                    .writer_with_num_threads(threads, WRITER_BYTES)
                    .map_err(here)?,
            )
        } else {
            None
        };
        Ok(TextIndex {
            index,
            reader,
            writer,
            body,
            row,
            analyzer,
            pending: 0,
            queued: Vec::new(),
            tail: Tail::new(analyzer.build()), // no stem memory: it would keep an erased text's words
            segments: Mutex::new(HashMap::new()),
            proof: Mutex::new(proof),
        })
    }

    /// The analyzer the index was built with.
    pub fn analyzer(&self) -> Analyzer {
        self.analyzer
    }

    fn writer(&mut self) -> Result<&mut IndexWriter> {
        self.writer.as_mut().ok_or_else(read_only)
    }

    /// Adds one document per (row, text); searchable at once while the tail holds every
    /// pending document ([`searches_pending`](Self::searches_pending)), durable (and
    /// otherwise searchable) after [`commit`](Self::commit).
    pub fn add<S: AsRef<str>>(&mut self, rows: &[u32], texts: &[S]) -> Result<()> {
        if rows.len() != texts.len() {
            return Err(CoreError::ShapeMismatch {
                what: "texts",
                expected: rows.len(),
                got: texts.len(),
            });
        }
        self.writer()?;
        // A few documents (a live write's) wait in the queue; many (a replay's run) go to the
        // threads one by one after it, where the writer's bounded channel holds the feed back
        // when the threads fall behind (a queued batch is one place in it, however large).
        let many = rows.len() >= HANDOFF;
        if many {
            self.hand_off()?;
        }
        let (body, row) = (self.body, self.row);
        for (&r, t) in rows.iter().zip(texts) {
            let mut doc = TantivyDocument::new();
            doc.add_text(body, t.as_ref());
            doc.add_u64(row, u64::from(r));
            if many {
                let writer = self.writer.as_mut().ok_or_else(read_only)?;
                let sent = writer.add_document(doc).map(|_| ());
                self.sent(sent)?;
            } else {
                self.queued.push(doc);
            }
            self.tail.push(r, t.as_ref());
            self.pending += 1;
        }
        if self.queued.len() >= HANDOFF {
            self.hand_off()?;
        }
        Ok(())
    }

    /// Hands the queued documents to the writer's indexing threads, in one batch.
    fn hand_off(&mut self) -> Result<()> {
        if self.queued.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.queued);
        let writer = self.writer.as_mut().ok_or_else(read_only)?;
        let sent = writer
            .run(batch.into_iter().map(UserOperation::Add))
            .map(|_| ());
        self.sent(sent)
    }

    /// What handing documents to the writer's threads came to.
    fn sent(&mut self, outcome: tantivy::Result<()>) -> Result<()> {
        let Err(e) = outcome else {
            return Ok(());
        };
        // The writer died (a full disk in its thread): what it held since the last commit
        // is gone with it (thread_cause aborts it), so the queue and the tail let it go too.
        let writer = self.writer.as_mut().ok_or_else(read_only)?;
        let cause = thread_cause(writer, e);
        self.queued.clear();
        self.tail.clear();
        self.pending = 0;
        Err(cause)
    }

    /// Documents added since the last commit.
    pub fn pending(&self) -> u64 {
        self.pending
    }

    /// Whether searches see every document added since the last commit (the tail holds
    /// them all: at most [`TAIL_LIMIT`](super::TAIL_LIMIT)); when not, a commit makes them searchable.
    pub fn searches_pending(&self) -> bool {
        self.tail.covers()
    }

    /// Makes the added documents durable and searchable, recording `payload` with them.
    pub fn commit(&mut self, payload: &str) -> Result<()> {
        self.hand_off()?;
        let writer = self.writer()?;
        let mut prepared = writer.prepare_commit().map_err(tantivy_error)?;
        prepared.set_payload(payload);
        prepared.commit().map_err(tantivy_error)?;
        self.pending = 0;
        self.tail.clear();
        self.reload()
    }

    /// Lets go of the writer (and its directory lock) after its merges finish;
    /// uncommitted documents are dropped. The index stays searchable.
    pub fn close(&mut self) -> Result<()> {
        self.queued.clear();
        self.tail.clear();
        self.pending = 0;
        match self.writer.take() {
            Some(writer) => writer.wait_merging_threads().map_err(tantivy_error),
            None => Ok(()),
        }
    }

    /// Lets go of the writer without a step of its own: no merge waited for, no thread
    /// joined, no lock file removed. What a forked child does with the writer it inherited:
    /// the threads and the files are its parent's. The index stays searchable.
    pub fn abandon(&mut self) {
        self.queued.clear();
        self.tail.clear();
        self.pending = 0;
        if let Some(writer) = self.writer.take() {
            std::mem::forget(writer);
        }
    }

    /// Erases the documents of `rows` for good, recording `payload` with the commit;
    /// how many documents it removed.
    ///
    /// The documents are deleted and committed, then every segment that held one is
    /// merged into a new segment without them (a term no remaining document has is not
    /// written) and the old segment files are removed. Uncommitted documents are
    /// committed with the deletion (an erased one leaves the tail at once, and counts as
    /// removed). Rows the index does not hold are ignored.
    pub fn erase(&mut self, rows: &RoaringBitmap, payload: &str) -> Result<u64> {
        let before = self.num_docs() + self.pending; // the pending documents are committed with the deletion
        if rows.is_empty() {
            return Ok(0);
        }
        self.hand_off()?; // the deletion follows every document added before it
        let writer = self.writer()?;
        writer
            .delete_query(Box::new(RowsQuery { rows: rows.clone() }))
            .map_err(tantivy_error)?;
        self.tail.remove(rows); // the commit below empties it; until then erased rows are not searched
        self.commit(payload)?;
        // Background merges started by earlier commits finish first: a segment being
        // merged cannot be merged again.
        if let Some(writer) = self.writer.take() {
            writer.wait_merging_threads().map_err(tantivy_error)?;
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 2);
        self.writer = Some(
            self.index
                .writer_with_num_threads(threads, WRITER_BYTES)
                .map_err(tantivy_error)?,
        );
        // The segments as they are now (those merges may have replaced some), until none holds
        // a deleted document: a merge writes a segment without them.
        for _ in 0..8 {
            self.reload()?;
            let holding: Vec<SegmentId> = self
                .reader
                .searcher()
                .segment_readers()
                .iter()
                .filter(|s| s.has_deletes())
                .map(SegmentReader::segment_id)
                .collect();
            if holding.is_empty() {
                break;
            }
            self.writer()?
                .merge(&holding)
                .wait()
                .map_err(tantivy_error)?;
        }
        self.reload()?;
        self.writer()?
            .garbage_collect_files()
            .wait()
            .map_err(tantivy_error)?;
        Ok(before.saturating_sub(self.num_docs()))
    }

    /// Drops the documents added since the last commit (those still queued with those
    /// tantivy holds); when tantivy's rollback fails, the queue and the tail are kept.
    pub fn rollback(&mut self) -> Result<()> {
        self.writer()?.rollback().map_err(tantivy_error)?;
        self.queued.clear();
        self.pending = 0;
        self.tail.clear();
        Ok(())
    }

    /// Picks up the latest commit (another process's, for a read-only index).
    pub fn reload(&self) -> Result<()> {
        self.reader.reload().map_err(tantivy_error)?;
        self.prove(true)?;
        let live: HashSet<SegmentId> = self
            .reader
            .searcher()
            .segment_readers()
            .iter()
            .map(SegmentReader::segment_id)
            .collect();
        self.segments
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|id, _| live.contains(id));
        Ok(())
    }

    /// Checks the segment files again where they changed since proven — after a reload
    /// (`always`) those of the new segments, before a search those it searches; a
    /// damaged file is [`TextFault::Corrupt`].
    fn prove(&self, always: bool) -> Result<()> {
        let mut proof = self.proof.lock().unwrap_or_else(|p| p.into_inner());
        let found = if always {
            proof.check(&self.index).map_err(tantivy_error)?
        } else if proof.holds() {
            return Ok(());
        } else {
            proof.recheck(&self.index)
        };
        match found {
            Some(damaged) => Err(CoreError::TextIndex {
                fault: TextFault::Corrupt,
                detail: format!("{}: {damaged}", proof.dir.display()),
            }),
            None => {
                if self.writer.is_some() {
                    proof.save();
                }
                Ok(())
            }
        }
    }

    /// The payload of the last commit, if any.
    pub fn payload(&self) -> Result<Option<String>> {
        Ok(self.index.load_metas().map_err(tantivy_error)?.payload)
    }

    /// Committed documents (those a reader of the directory sees).
    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Whether any segment file's term dictionary, or the tail, still holds a term of
    /// `text` (deleted documents included: what an erase must leave behind is nothing).
    pub fn holds_terms(&self, text: &str) -> Result<bool> {
        let searcher = self.reader.searcher();
        for word in self.query_terms(text) {
            if self.tail.holds(&word) {
                return Ok(true);
            }
            let term = Term::from_field_text(self.body, &word);
            for segment in searcher.segment_readers() {
                if segment
                    .inverted_index(self.body)
                    .map_err(tantivy_error)?
                    .terms()
                    .get(term.serialized_value_bytes())?
                    .is_some()
                {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The distinct query terms of `text`, in order of first appearance.
    pub fn query_terms(&self, text: &str) -> Vec<String> {
        let mut analyzer: TextAnalyzer = self.analyzer.build();
        let mut seen = HashSet::new();
        terms(&mut analyzer, text)
            .into_iter()
            .filter(|t| seen.insert(t.clone()))
            .collect()
    }

    /// The best `limit` rows by BM25 of `text` (any of its terms), among `candidates`
    /// when given, committed or in the tail; best first, ties to the later row.
    pub fn search(
        &self,
        text: &str,
        candidates: Option<&RoaringBitmap>,
        limit: usize,
        plan: Plan,
    ) -> Result<Vec<(u32, f32)>> {
        let words = self.query_terms(text);
        if words.is_empty() || limit == 0 || candidates.is_some_and(RoaringBitmap::is_empty) {
            return Ok(Vec::new());
        }
        self.prove(false)?;
        let searcher = self.reader.searcher();
        let terms: Vec<Term> = words
            .iter()
            .map(|w| Term::from_field_text(self.body, w))
            .collect();
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|t| {
                (
                    Occur::Should,
                    Box::new(TermQuery::new(t.clone(), IndexRecordOption::WithFreqs))
                        as Box<dyn Query>,
                )
            })
            .collect();
        let corpus = Corpus {
            searcher: &searcher,
            tail: &self.tail,
        };
        let scoring = EnableScoring::enabled_from_statistics_provider(&corpus, &searcher);
        let weight = BooleanQuery::new(clauses)
            .weight(scoring)
            .map_err(tantivy_error)?;
        let mut top = Top::new(limit);
        if self.tail.len() > 0 {
            let weights = words
                .iter()
                .zip(&terms)
                .map(|(w, t)| {
                    Bm25Weight::for_terms(&corpus, std::slice::from_ref(t)).map(|b| (w.clone(), b))
                })
                .collect::<tantivy::Result<Vec<_>>>()
                .map_err(tantivy_error)?;
            for (row, score) in self.tail.scores(&weights, candidates) {
                top.push(row, score);
            }
        }
        let seek = match (candidates, plan) {
            (None, _) | (_, Plan::Scan) => false,
            (Some(_), Plan::Seek) => true,
            (Some(c), Plan::Auto) => {
                let mut postings = 0u64;
                for t in &terms {
                    postings += searcher.doc_freq(t).map_err(tantivy_error)?;
                }
                c.len().saturating_mul(SEEK_COST) < postings
            }
        };
        if seek {
            self.seek(
                &searcher,
                scoring,
                &terms,
                candidates.expect("seek has candidates"),
                &mut top,
            )?;
        } else {
            for segment in searcher.segment_readers() {
                let rows = segment.fast_fields().u64("row").map_err(tantivy_error)?;
                let alive = segment.alive_bitset();
                weight
                    .for_each_pruning(top.threshold(), segment, &mut |doc, score| {
                        if alive.is_none_or(|a| a.is_alive(doc)) {
                            let row = rows.first(doc).unwrap_or(u64::MAX);
                            if let Ok(row) = u32::try_from(row) {
                                if candidates.is_none_or(|c| c.contains(row)) {
                                    top.push(row, score);
                                }
                            }
                        }
                        top.threshold()
                    })
                    .map_err(tantivy_error)?;
            }
        }
        Ok(top.into_sorted())
    }

    /// Scores each candidate term by term: every term's postings skip straight to the
    /// candidate's document (a union scorer would decode and score whole windows).
    fn seek(
        &self,
        searcher: &Searcher,
        scoring: EnableScoring<'_>,
        terms: &[Term],
        candidates: &RoaringBitmap,
        top: &mut Top,
    ) -> Result<()> {
        let weights = terms
            .iter()
            .map(|t| TermQuery::new(t.clone(), IndexRecordOption::WithFreqs).weight(scoring))
            .collect::<tantivy::Result<Vec<Box<dyn Weight>>>>()
            .map_err(tantivy_error)?;
        for segment in searcher.segment_readers() {
            let map = self.segment_rows(segment)?;
            let mut docs: Vec<(u32, u32)> = (candidates & &map.rows)
                .iter()
                .filter_map(|row| {
                    map.by_row
                        .binary_search_by_key(&row, |&(r, _)| r)
                        .ok()
                        .map(|i| (map.by_row[i].1, row))
                })
                .collect();
            if docs.is_empty() {
                continue;
            }
            docs.sort_unstable();
            let mut scorers = weights
                .iter()
                .map(|w| w.scorer(segment, 1.0))
                .collect::<tantivy::Result<Vec<_>>>()
                .map_err(tantivy_error)?;
            let alive = segment.alive_bitset();
            for (doc, row) in docs {
                if alive.is_some_and(|a| !a.is_alive(doc)) {
                    continue;
                }
                let mut score = 0f32;
                let mut matched = false;
                for scorer in scorers.iter_mut() {
                    let mut at = scorer.doc();
                    if at < doc {
                        at = scorer.seek(doc);
                    }
                    if at == doc {
                        score += scorer.score();
                        matched = true;
                    }
                }
                if matched {
                    top.push(row, score);
                }
            }
        }
        Ok(())
    }

    /// The rows of `segment`, read once from its fast field and cached.
    fn segment_rows(&self, segment: &SegmentReader) -> Result<Arc<SegmentRows>> {
        let id = segment.segment_id();
        if let Some(found) = self
            .segments
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
        {
            return Ok(found.clone());
        }
        let column = segment.fast_fields().u64("row").map_err(tantivy_error)?;
        let mut by_row: Vec<(u32, u32)> = (0..segment.max_doc())
            .filter_map(|doc| {
                column
                    .first(doc)
                    .and_then(|r| u32::try_from(r).ok())
                    .map(|r| (r, doc))
            })
            .collect();
        by_row.sort_unstable();
        let rows = RoaringBitmap::from_sorted_iter(by_row.iter().map(|&(r, _)| r))
            .unwrap_or_else(|_| by_row.iter().map(|&(r, _)| r).collect());
        let made = Arc::new(SegmentRows { rows, by_row });
        self.segments
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, made.clone());
        Ok(made)
    }
}

/// The error behind a killed writer: tantivy's `ErrorInThread` says only that an indexing
/// worker failed (an I/O error most likely, a full disk typically); preparing a commit
/// joins the workers and returns the worker's own error, mapped as any other (a full
/// disk is then `Io` with `ENOSPC`). A prepared commit is aborted, never committed.
fn thread_cause(writer: &mut IndexWriter, e: TantivyError) -> CoreError {
    if !matches!(e, TantivyError::ErrorInThread(_)) {
        return tantivy_error(e);
    }
    match writer.prepare_commit() {
        Err(inner) => tantivy_error(inner),
        Ok(prepared) => {
            let _ = prepared.abort();
            tantivy_error(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(dir: &Path) -> TextIndex {
        let mut t = TextIndex::open(dir, Analyzer::StemBigram, true).unwrap();
        let texts = [
            "the adoption agency called about the adoption",
            "lunch with the team",
            "adoption paperwork signed",
            "東京で会議",
            "the agency sent a letter about lunch",
        ];
        let rows: Vec<u32> = (0..texts.len() as u32).collect();
        t.add(&rows, &texts).unwrap();
        t.commit("{}").unwrap();
        t
    }

    #[test]
    fn ranks_by_bm25_and_plans_agree() {
        let dir = tempfile::tempdir().unwrap();
        let t = corpus(dir.path());
        let all = t.search("adoption agency", None, 10, Plan::Auto).unwrap();
        assert_eq!(all.iter().map(|h| h.0).collect::<Vec<_>>(), [0, 2, 4]);
        let c: RoaringBitmap = [2, 3, 4].into_iter().collect();
        let scan = t
            .search("adoption agency", Some(&c), 10, Plan::Scan)
            .unwrap();
        let seek = t
            .search("adoption agency", Some(&c), 10, Plan::Seek)
            .unwrap();
        assert_eq!(scan, seek);
        assert_eq!(scan.iter().map(|h| h.0).collect::<Vec<_>>(), [2, 4]);
        assert_eq!(t.search("東京", None, 10, Plan::Auto).unwrap()[0].0, 3);
        assert!(t.search("", None, 10, Plan::Auto).unwrap().is_empty());
    }

    #[test]
    fn erase_removes_documents_and_their_terms_from_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = corpus(dir.path());
        t.add(&[5, 6], &["the quokka secret", "more adoption news"])
            .unwrap();
        t.commit("{}").unwrap();
        assert!(t.holds_terms("quokka").unwrap());
        assert_eq!(t.search("quokka", None, 10, Plan::Auto).unwrap()[0].0, 5);
        let gone: RoaringBitmap = [5, 2, 99].into_iter().collect();
        assert_eq!(t.erase(&gone, "{\"erased\":1}").unwrap(), 2);
        assert!(t.search("quokka", None, 10, Plan::Auto).unwrap().is_empty());
        let left: Vec<u32> = t
            .search("adoption", None, 10, Plan::Auto)
            .unwrap()
            .iter()
            .map(|h| h.0)
            .collect();
        assert_eq!(left, [0, 6]);
        assert!(
            !t.holds_terms("quokka").unwrap(),
            "the erased term is still in a term dictionary"
        );
        assert!(t.holds_terms("adoption").unwrap());
        assert_eq!(t.payload().unwrap().as_deref(), Some("{\"erased\":1}"));
        drop(t);
        let t = TextIndex::open(dir.path(), Analyzer::StemBigram, false).unwrap();
        assert_eq!(t.num_docs(), 5);
    }

    #[test]
    fn documents_added_a_few_at_a_time_wait_in_order_for_their_hand_over() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = corpus(dir.path());
        // More than a hand-over's worth, one document a call (as live writes add them).
        let n = HANDOFF as u32 + 10;
        for r in 5..5 + n {
            t.add(&[r], &[format!("walrus number {r}")]).unwrap();
        }
        assert_eq!(t.pending(), u64::from(n));
        let found = t.search("walrus", None, 1000, Plan::Auto).unwrap(); // from the tail
        assert_eq!(found.len(), n as usize);
        t.commit("{}").unwrap();
        assert_eq!(t.num_docs(), 5 + u64::from(n));
        // Queued, then rolled back: never indexed.
        t.add(&[900], &["a narwhal"]).unwrap();
        t.rollback().unwrap();
        t.commit("{}").unwrap();
        assert!(!t.holds_terms("narwhal").unwrap());
        // Queued, then erased: the deletion follows the documents added before it.
        t.add(&[901], &["a narwhal"]).unwrap();
        t.add(&[902], &["an axolotl"]).unwrap();
        let gone: RoaringBitmap = [901].into_iter().collect();
        assert_eq!(t.erase(&gone, "{}").unwrap(), 1);
        assert!(!t.holds_terms("narwhal").unwrap());
        assert_eq!(t.search("axolotl", None, 10, Plan::Auto).unwrap()[0].0, 902);
        // Queued, then closed: dropped with the other uncommitted documents.
        t.add(&[903], &["a quetzal"]).unwrap();
        t.close().unwrap();
        drop(t);
        let t = TextIndex::open(dir.path(), Analyzer::StemBigram, false).unwrap();
        assert_eq!(t.num_docs(), 5 + u64::from(n) + 1);
        assert!(!t.holds_terms("quetzal").unwrap());
    }

    #[test]
    fn payload_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let t = corpus(dir.path());
        assert_eq!(t.payload().unwrap().as_deref(), Some("{}"));
        drop(t);
        let again = TextIndex::open(dir.path(), Analyzer::StemBigram, false).unwrap();
        assert_eq!(again.num_docs(), 5);
        assert!(matches!(
            TextIndex::open(dir.path(), Analyzer::PlainBigram, false),
            Err(CoreError::TextIndex {
                fault: TextFault::Corrupt,
                ..
            })
        ));
    }

    #[test]
    fn a_flipped_byte_in_any_segment_file_fails_the_open_as_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        drop(corpus(dir.path()));
        let segment_files: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.extension().is_some_and(|x| {
                    ["term", "idx", "pos", "store", "fast", "fieldnorm"]
                        .contains(&x.to_str().unwrap())
                })
            })
            .collect();
        assert!(segment_files.len() >= 5, "{segment_files:?}");
        for path in segment_files {
            let good = std::fs::read(&path).unwrap();
            for at in [0, good.len() / 2, good.len() - 1] {
                let mut bad = good.clone();
                bad[at] ^= 0xFF;
                std::fs::write(&path, &bad).unwrap();
                for writable in [false, true] {
                    match TextIndex::open(dir.path(), Analyzer::StemBigram, writable) {
                        Err(CoreError::TextIndex {
                            fault: TextFault::Corrupt,
                            detail,
                        }) => assert!(
                            detail.contains(&dir.path().display().to_string()),
                            "{detail}"
                        ),
                        other => panic!(
                            "{} byte {at}: expected a corrupt text index, got {:?}",
                            path.display(),
                            other.map(|_| ())
                        ),
                    }
                }
            }
            std::fs::write(&path, &good).unwrap();
        }
        let again = TextIndex::open(dir.path(), Analyzer::StemBigram, false).unwrap();
        assert_eq!(
            again
                .search("adoption", None, 10, Plan::Auto)
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn a_second_writer_finds_the_index_locked_not_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = corpus(dir.path());
        match TextIndex::open(dir.path(), Analyzer::StemBigram, true) {
            Err(CoreError::TextIndex {
                fault: TextFault::Locked,
                detail,
            }) => assert!(
                detail.contains(&dir.path().display().to_string()),
                "{detail}"
            ),
            other => panic!("expected a locked text index, got {:?}", other.map(|_| ())),
        }
        first.close().unwrap();
        assert!(TextIndex::open(dir.path(), Analyzer::StemBigram, true).is_ok());
        assert!(
            matches!(TextIndex::open(&dir.path().join("absent"), Analyzer::StemBigram, false), Err(CoreError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound)
        );
    }
}
