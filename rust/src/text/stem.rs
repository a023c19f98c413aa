//! English stemming that remembers the words it stemmed.
//!
//! The Snowball stemmer walks suffix tables for every token, which makes it the largest
//! part of analyzing English text. The words of a text repeat (a few thousand of them
//! make up most of any corpus), so [`CachedStemmer`] keeps, in each analyzer, the stem
//! of every word it met, up to [`CACHE_WORDS`] words, and looks a word up before
//! stemming it. Its stems are the ones tantivy's `Stemmer` gives: the same crate's
//! algorithm, whose stem depends on the word alone.
//!
//! It reads the documents a writer indexes only ([`Analyzer::for_documents`]): an indexing
//! thread meets the same words many times, and its memory goes with the segment it builds,
//! at the next commit (an erasure commits, so no erased text's words outlive it). A query's
//! few words, and the tail's documents, are stemmed by tantivy's own filter
//! ([`Analyzer::build`]), which remembers nothing. The memory belongs to one analyzer: a
//! clone (tantivy clones an analyzer for each segment it writes) starts empty, so no lock
//! is taken. The words kept
//! are the first ones met, which in any text are mostly the frequent ones; a word past
//! the limit is stemmed each time, as without the memory. Its hash is seeded per
//! process ([`foldhash`]), so no text can be written to make the lookups collide.
//!
//! [`Analyzer::for_documents`]: super::Analyzer::for_documents
//! [`Analyzer::build`]: super::Analyzer::build

use std::collections::HashMap;

use foldhash::fast::RandomState;
use rust_stemmers::{Algorithm, Stemmer};
use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// The most words one analyzer remembers the stem of (a few megabytes at most).
pub const CACHE_WORDS: usize = 1 << 15;

type Stems = HashMap<Box<str>, Box<str>, RandomState>;

/// The token filter: English Snowball stems, each word's remembered (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct CachedStemmer {
    algorithm: Algorithm,
}

impl CachedStemmer {
    /// The English stemmer (tantivy's `Language::English`).
    pub fn english() -> Self {
        CachedStemmer {
            algorithm: Algorithm::English,
        }
    }
}

impl TokenFilter for CachedStemmer {
    type Tokenizer<T: Tokenizer> = CachedStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> CachedStemmerFilter<T> {
        CachedStemmerFilter {
            algorithm: self.algorithm,
            inner: tokenizer,
            stems: Stems::default(),
        }
    }
}

/// A tokenizer whose tokens are stemmed, with the stems met so far.
pub struct CachedStemmerFilter<T> {
    algorithm: Algorithm,
    inner: T,
    stems: Stems,
}

impl<T: Clone> Clone for CachedStemmerFilter<T> {
    /// The same filter with nothing remembered (see the module docs).
    fn clone(&self) -> Self {
        CachedStemmerFilter {
            algorithm: self.algorithm,
            inner: self.inner.clone(),
            stems: Stems::default(),
        }
    }
}

impl<T: Tokenizer> Tokenizer for CachedStemmerFilter<T> {
    type TokenStream<'a> = CachedStemmerStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        CachedStemmerStream {
            tail: self.inner.token_stream(text),
            stemmer: Stemmer::create(self.algorithm),
            stems: &mut self.stems,
        }
    }
}

/// The stream of stemmed tokens.
pub struct CachedStemmerStream<'a, T> {
    tail: T,
    stemmer: Stemmer,
    stems: &'a mut Stems,
}

impl<T: TokenStream> TokenStream for CachedStemmerStream<'_, T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        if let Some(stem) = self.stems.get(token.text.as_str()) {
            token.text.clear();
            token.text.push_str(stem);
            return true;
        }
        let stem: Box<str> = self.stemmer.stem(&token.text).into();
        if self.stems.len() < CACHE_WORDS {
            let word = std::mem::take(&mut token.text).into_boxed_str();
            token.text = String::from(&*stem);
            self.stems.insert(word, stem);
        } else {
            token.text.clear();
            token.text.push_str(&stem);
        }
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use tantivy::tokenizer::{
        Language, LowerCaser, SimpleTokenizer, Stemmer as TantivyStemmer, TextAnalyzer,
    };

    use super::*;
    use crate::text::tokenize::terms;

    fn ours() -> TextAnalyzer {
        TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(CachedStemmer::english())
            .build()
    }

    fn tantivys() -> TextAnalyzer {
        TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(TantivyStemmer::new(Language::English))
            .build()
    }

    const TEXT: &str = "Running runners ran; the agencies' adoption of generously \
        generalized policies was running late. Caresses ponies ties caress cats, \
        feed agreed disabled matting mating meeting milling messing meetings \
        happy sky news innings outing canning herring earring proceed exceed succeed \
        dying lying tying skies dies ugly early only singly generate generates generated";

    #[test]
    fn stems_are_tantivys_met_once_or_again() {
        let (mut a, mut b) = (ours(), tantivys());
        // Twice through the same analyzer: the second pass reads the remembered stems.
        for _ in 0..2 {
            assert_eq!(terms(&mut a, TEXT), terms(&mut b, TEXT));
        }
    }

    #[test]
    fn stems_of_many_made_up_words_are_tantivys() {
        let roots = [
            "gener", "happ", "nation", "run", "agree", "sky", "proceed", "cat", "dy", "ly",
        ];
        let ends = [
            "", "s", "es", "ed", "ing", "ly", "ness", "ational", "izer", "ies", "y", "ation",
            "ful", "fulness", "ousli", "ement",
        ];
        let text: String = roots
            .iter()
            .flat_map(|r| ends.iter().map(move |e| format!("{r}{e} ")))
            .collect();
        let (mut a, mut b) = (ours(), tantivys());
        for _ in 0..2 {
            assert_eq!(terms(&mut a, &text), terms(&mut b, &text));
        }
    }

    #[test]
    fn past_the_limit_words_are_stemmed_each_time() {
        let mut a = ours();
        let many: String = (0..CACHE_WORDS + 50).map(|i| format!("w{i}ing ")).collect();
        let _ = terms(&mut a, &many);
        let words = "w1ing flying w99999999ing generously";
        assert_eq!(terms(&mut a, words), terms(&mut tantivys(), words));
    }

    #[test]
    fn a_clone_starts_empty_and_agrees() {
        let mut filter = CachedStemmer::english().transform(SimpleTokenizer::default());
        let mut stream = filter.token_stream("adoption");
        while stream.advance() {}
        assert_eq!(filter.stems.len(), 1);
        let mut copy = filter.clone();
        assert!(copy.stems.is_empty());
        let mut stream = copy.token_stream("adoption");
        assert!(stream.advance());
        assert_eq!(stream.token().text, "adopt");
    }
}
