//! The analyzers of the text index: words for spaced scripts, character n-grams for CJK.
//!
//! Japanese and Chinese are written without spaces, so a word tokenizer sees a whole
//! sentence as one token. [`CueTokenizer`] splits text into runs: a run of letters
//! and digits of a spaced script becomes one word; a run of CJK characters (kana,
//! kanji, hangul) becomes overlapping character n-grams (a run shorter than `n`
//! becomes one token). Punctuation and spaces separate runs. The same analyzer reads
//! documents and queries, so a query bigram meets the document bigram it came from.

use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer, Token,
    TokenFilter, TokenStream, Tokenizer,
};

use super::stem::CachedStemmer;
use crate::error::{CoreError, Result};

/// Whether `c` belongs to a script written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // hiragana, katakana
        | 0x31F0..=0x31FF    // katakana phonetic extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF66..=0xFF9F    // half-width katakana
        | 0x20000..=0x2FFFF) // CJK extensions B and beyond
}

/// Words for spaced scripts, `n`-grams of characters for CJK runs.
#[derive(Clone, Debug)]
pub struct CueTokenizer {
    n: usize,
    tokens: Vec<Token>,
}

impl CueTokenizer {
    /// A tokenizer cutting CJK runs into `n`-grams (`n` >= 1).
    pub fn new(n: usize) -> Self {
        CueTokenizer {
            n: n.max(1),
            tokens: Vec::new(),
        }
    }
}

/// The tokens of one text, handed out in order.
pub struct CueTokenStream<'a> {
    tokens: &'a mut Vec<Token>,
    next: usize,
}

impl TokenStream for CueTokenStream<'_> {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

impl Tokenizer for CueTokenizer {
    type TokenStream<'a> = CueTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CueTokenStream<'a> {
        self.tokens.clear();
        split(text, self.n, &mut self.tokens);
        CueTokenStream {
            tokens: &mut self.tokens,
            next: 0,
        }
    }
}

fn push(out: &mut Vec<Token>, text: &str, from: usize, to: usize) {
    let position = out.len();
    out.push(Token {
        offset_from: from,
        offset_to: to,
        position,
        text: text[from..to].to_owned(),
        position_length: 1,
    });
}

/// Appends the tokens of `text` to `out`.
fn split(text: &str, n: usize, out: &mut Vec<Token>) {
    let mut word: Option<usize> = None; // start of the current word run
    let mut run: Vec<(usize, usize)> = Vec::new(); // (start, end) of each char of the CJK run
    let flush_run = |run: &mut Vec<(usize, usize)>, out: &mut Vec<Token>| {
        if run.is_empty() {
            return;
        }
        if run.len() <= n {
            push(out, text, run[0].0, run[run.len() - 1].1);
        } else {
            for w in run.windows(n) {
                push(out, text, w[0].0, w[n - 1].1);
            }
        }
        run.clear();
    };
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        if is_cjk(c) {
            if let Some(s) = word.take() {
                push(out, text, s, i);
            }
            run.push((i, end));
        } else if c.is_alphanumeric() {
            flush_run(&mut run, out);
            word.get_or_insert(i);
        } else {
            if let Some(s) = word.take() {
                push(out, text, s, i);
            }
            flush_run(&mut run, out);
        }
    }
    if let Some(s) = word {
        push(out, text, s, text.len());
    }
    flush_run(&mut run, out);
}

/// The analyzers a text index can be built with; each is part of the index's recipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Analyzer {
    /// Lower-cased words, English stop words dropped, English stemming; CJK bigrams.
    StemBigram,
    /// Lower-cased words without stemming or stop words; CJK bigrams.
    PlainBigram,
    /// Like [`Analyzer::StemBigram`], with CJK single characters instead of bigrams.
    StemUnigram,
}

impl Analyzer {
    /// Every analyzer, by name.
    pub const ALL: [Analyzer; 3] = [
        Analyzer::StemBigram,
        Analyzer::PlainBigram,
        Analyzer::StemUnigram,
    ];

    /// The analyzer's name, as recorded in recipes.
    pub fn name(self) -> &'static str {
        match self {
            Analyzer::StemBigram => "stem-bigram",
            Analyzer::PlainBigram => "plain-bigram",
            Analyzer::StemUnigram => "stem-unigram",
        }
    }

    /// The analyzer called `name`.
    pub fn from_name(name: &str) -> Result<Self> {
        Analyzer::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| CoreError::InvalidArgument {
                name: "analyzer",
                reason: format!(
                    "unknown analyzer {name:?}; known: {:?}",
                    Analyzer::ALL.map(Analyzer::name)
                ),
            })
    }

    /// The tantivy analyzer: tokenizer and filters (a query's terms are read with it).
    pub fn build(self) -> TextAnalyzer {
        self.with_stemmer(Stemmer::new(Language::English))
    }

    /// The same analyzer for documents: the same terms, each English word's stem remembered
    /// once met (`stem.rs`), for a reader of many texts.
    pub fn for_documents(self) -> TextAnalyzer {
        self.with_stemmer(CachedStemmer::english())
    }

    fn with_stemmer<F: TokenFilter>(self, stemmer: F) -> TextAnalyzer {
        let n = if self == Analyzer::StemUnigram { 1 } else { 2 };
        let base = TextAnalyzer::builder(CueTokenizer::new(n))
            .filter(RemoveLongFilter::limit(40))
            .filter(LowerCaser);
        match self {
            Analyzer::PlainBigram => base.build(),
            Analyzer::StemBigram | Analyzer::StemUnigram => base
                .filter(
                    StopWordFilter::new(Language::English)
                        .expect("tantivy ships English stop words"),
                )
                .filter(stemmer)
                .build(),
        }
    }
}

/// The terms `analyzer` makes of `text`, in order (with repeats).
pub fn terms(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(a: Analyzer, text: &str) -> Vec<String> {
        terms(&mut a.build(), text)
    }

    #[test]
    fn latin_words_are_lowered_stemmed_and_stopped() {
        assert_eq!(
            words(Analyzer::StemBigram, "The Adoption agencies, adopted!"),
            ["adopt", "agenc", "adopt"]
        );
        assert_eq!(
            words(Analyzer::PlainBigram, "The Adoption"),
            ["the", "adoption"]
        );
    }

    #[test]
    fn cjk_runs_become_bigrams_and_mix_with_words() {
        assert_eq!(
            words(Analyzer::StemBigram, "東京タワーへ行くAPI"),
            ["東京", "京タ", "タワ", "ワー", "ーへ", "へ行", "行く", "api"]
        );
        assert_eq!(
            words(Analyzer::StemUnigram, "猫が好き"),
            ["猫", "が", "好", "き"]
        );
        assert_eq!(words(Analyzer::StemBigram, "猫。犬"), ["猫", "犬"]);
    }

    #[test]
    fn offsets_point_into_the_text() {
        let mut t = CueTokenizer::new(2);
        let text = "ab 日本語";
        let mut s = t.token_stream(text);
        let mut spans = Vec::new();
        while s.advance() {
            spans.push(&text[s.token().offset_from..s.token().offset_to]);
        }
        assert_eq!(spans, ["ab", "日本", "本語"]);
    }

    #[test]
    fn documents_and_queries_are_read_alike() {
        let text = "Running runners RAN to the agencies' adoption of 東京の会議 and \
            generously generalized policies, running late: caresses, ponies, skies";
        for analyzer in Analyzer::ALL {
            let (mut documents, mut queries) = (analyzer.for_documents(), analyzer.build());
            for _ in 0..2 {
                // again: the documents' analyzer now reads remembered stems
                assert_eq!(terms(&mut documents, text), terms(&mut queries, text));
            }
        }
    }

    #[test]
    fn unknown_analyzer_is_an_error() {
        assert!(Analyzer::from_name("nope").is_err());
        assert_eq!(
            Analyzer::from_name("stem-bigram").unwrap(),
            Analyzer::StemBigram
        );
    }
}
