//! A record's values, read from its line in one pass and borrowed from it.
//!
//! The reader knows the JSON a rule can prove and nothing more: `null`, booleans,
//! numbers, strings, lists of strings, and objects of such values (the salience axes,
//! an empty metadata object). Anything else — a nested container, a number a double
//! cannot hold, an escape that is no character, bytes that are not UTF-8, trailing
//! bytes — is no value ([`None`]), and the decoder then leaves the whole line to the
//! full validator. A string is borrowed from the line unless it holds an escape.

use std::borrow::Cow;

/// One value, read as far as a rule needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Val<'a> {
    Null,
    Bool(bool),
    Num(f64),
    Str(Cow<'a, str>),
    Strs(Vec<Cow<'a, str>>),
    /// An object's members in order (repeats kept: the last one counts where it matters).
    Object(Vec<(Cow<'a, str>, Val<'a>)>),
}

impl<'a> Val<'a> {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The same value, borrowing from this one (a default, shared by every row).
    pub fn reborrow(&self) -> Val<'_> {
        match self {
            Val::Null => Val::Null,
            Val::Bool(b) => Val::Bool(*b),
            Val::Num(x) => Val::Num(*x),
            Val::Str(s) => Val::Str(Cow::Borrowed(s)),
            Val::Strs(items) => {
                Val::Strs(items.iter().map(|s| Cow::Borrowed(s.as_ref())).collect())
            }
            Val::Object(members) => Val::Object(
                members
                    .iter()
                    .map(|(k, v)| (Cow::Borrowed(k.as_ref()), v.reborrow()))
                    .collect(),
            ),
        }
    }

    /// The value as owned data (it no longer borrows its text).
    pub fn into_owned(self) -> Val<'static> {
        let own = |s: Cow<'a, str>| Cow::Owned(s.into_owned());
        match self {
            Val::Null => Val::Null,
            Val::Bool(b) => Val::Bool(b),
            Val::Num(x) => Val::Num(x),
            Val::Str(s) => Val::Str(own(s)),
            Val::Strs(items) => Val::Strs(items.into_iter().map(own).collect()),
            Val::Object(members) => Val::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (own(k), v.into_owned()))
                    .collect(),
            ),
        }
    }
}

/// The object's members, in order.
type Members<'a> = Vec<(Cow<'a, str>, Val<'a>)>;

/// `text` as one value (whitespace around it allowed), or `None`.
pub(super) fn value(text: &str) -> Option<Val<'_>> {
    let mut r = Reader::new(text);
    let v = r.value(true)?;
    r.end().then_some(v)
}

/// Reads `text` as one object whose values may be containers (a list of strings, an
/// object of scalars), as a record's episode is read, handing each member to `member` in
/// order; `None` when it is no such object or `member` answers `None`.
pub(super) fn object<'a>(
    text: &'a str,
    member: impl FnMut(Cow<'a, str>, Val<'a>) -> Option<()>,
) -> Option<()> {
    let mut r = Reader::new(text);
    r.eat(b'{')?;
    r.members(true, member)?;
    r.end().then_some(())
}

/// A record that carries an episode, as cuemem writes one: `{"episode": {...}, "op": "..."}`
/// with nothing after it but whitespace (the `\n`): each of the episode's members is handed
/// to `member` in order as it is read (no list of them is built), then the op is answered.
/// `member` answering `None` stops the reading: the record is then no carrier.
pub(super) fn carrier<'a>(
    text: &'a str,
    member: impl FnMut(Cow<'a, str>, Val<'a>) -> Option<()>,
) -> Option<Cow<'a, str>> {
    let mut r = Reader::new(text);
    r.eat(b'{')?;
    (r.key()? == "episode").then_some(())?;
    r.eat(b'{')?;
    r.members(true, member)?;
    r.eat(b',')?;
    (r.key()? == "op").then_some(())?;
    r.eat(b'"')?;
    let op = r.string()?;
    r.eat(b'}')?;
    r.end().then_some(op)
}

/// A cursor over one line of JSON.
struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Reader { text, at: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Skips JSON whitespace; the next byte, if any.
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        let b = self.bytes();
        while let Some(&c) = b.get(self.at) {
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(c);
            }
            self.at += 1;
        }
        None
    }

    /// Consumes `want` (after whitespace).
    #[inline(always)]
    fn eat(&mut self, want: u8) -> Option<()> {
        (self.peek()? == want).then(|| self.at += 1)
    }

    /// Only whitespace is left.
    fn end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// A member's key and its colon.
    #[inline(always)]
    fn key(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let k = self.string()?;
        self.eat(b':')?;
        Some(k)
    }

    /// A value; containers only at the top (`nested`): a list of strings, an object of scalars.
    #[inline(always)]
    fn value(&mut self, nested: bool) -> Option<Val<'a>> {
        match self.peek()? {
            b'"' => {
                self.at += 1;
                self.string().map(Val::Str)
            }
            b'n' => self.word("null").map(|_| Val::Null),
            b't' => self.word("true").map(|_| Val::Bool(true)),
            b'f' => self.word("false").map(|_| Val::Bool(false)),
            b'[' if nested => self.strings().map(Val::Strs),
            b'{' if nested => {
                self.at += 1;
                self.object(false).map(Val::Object)
            }
            b'-' | b'0'..=b'9' => self.number().map(Val::Num),
            _ => None,
        }
    }

    fn word(&mut self, w: &str) -> Option<()> {
        self.text[self.at..]
            .starts_with(w)
            .then(|| self.at += w.len())
    }

    /// An object's members, after its `{`; their values may be containers when `nested`.
    fn object(&mut self, nested: bool) -> Option<Members<'a>> {
        let mut out = Vec::with_capacity(8);
        self.members(nested, |k, v| {
            out.push((k, v));
            Some(())
        })?;
        Some(out)
    }

    /// An object's members, after its `{`, each handed to `member` as it is read (its
    /// values may be containers when `nested`); `member` answering `None` stops the reading.
    fn members(
        &mut self,
        nested: bool,
        mut member: impl FnMut(Cow<'a, str>, Val<'a>) -> Option<()>,
    ) -> Option<()> {
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            let k = self.key()?;
            member(k, self.value(nested)?)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A list of strings, at its `[`.
    fn strings(&mut self) -> Option<Vec<Cow<'a, str>>> {
        self.at += 1;
        let mut out = Vec::new();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(out);
        }
        loop {
            self.eat(b'"')?;
            out.push(self.string()?);
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(out);
                }
                _ => return None,
            }
        }
    }

    /// A string's contents, after its opening quote.
    #[inline(always)]
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let b = self.bytes();
        let start = self.at;
        let i = plain_run(b, start)?;
        if b[i] == b'"' {
            self.at = i + 1;
            return Some(Cow::Borrowed(&self.text[start..i]));
        }
        self.escaped(start, i)
    }

    /// The rest of a string from `start` whose first escape is at `i` (kept out of line:
    /// cuemem's own records seldom hold one).
    #[inline(never)]
    fn escaped(&mut self, start: usize, mut i: usize) -> Option<Cow<'a, str>> {
        let b = self.bytes();
        let mut out = String::with_capacity(i - start + 16);
        out.push_str(&self.text[start..i]);
        loop {
            // At a quote or a backslash (the runs between are ASCII-bounded, so UTF-8 intact).
            if b[i] == b'"' {
                self.at = i + 1;
                return Some(Cow::Owned(out));
            }
            let (c, len) = self.escape(i + 1)?;
            out.push(c);
            i += 1 + len;
            let next = plain_run(b, i)?;
            out.push_str(&self.text[i..next]);
            i = next;
        }
    }

    /// The character of the escape whose letter is at `i`, and the bytes it took after the backslash.
    fn escape(&self, i: usize) -> Option<(char, usize)> {
        let c = match *self.bytes().get(i)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = self.hex4(i + 1)?;
                if (0xDC00..0xE000).contains(&high) {
                    return None; // a trailing surrogate alone
                }
                if !(0xD800..0xDC00).contains(&high) {
                    return Some((char::from_u32(high)?, 5));
                }
                if self.bytes().get(i + 5..i + 7)? != b"\\u" {
                    return None; // a leading surrogate alone
                }
                let low = self.hex4(i + 7)?;
                if !(0xDC00..0xE000).contains(&low) {
                    return None;
                }
                let c = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                return Some((char::from_u32(c)?, 11));
            }
            _ => return None,
        };
        Some((c, 1))
    }

    fn hex4(&self, i: usize) -> Option<u32> {
        let digits = self.text.get(i..i + 4)?;
        if !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(digits, 16).ok()
    }

    /// A number as JSON writes one (`-?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?`), finite as a double.
    fn number(&mut self) -> Option<f64> {
        let b = self.bytes();
        let start = self.at;
        let mut i = start;
        // The digits as one integer, and how many were added (it holds them while at most 19).
        let (mut mantissa, mut count) = (0u64, 0usize);
        let mut digits = |i: &mut usize| {
            let from = *i;
            while let Some(eight) = b.get(*i..).and_then(eight_digits) {
                mantissa = mantissa.wrapping_mul(100_000_000).wrapping_add(eight);
                *i += 8;
            }
            while let Some(&c) = b.get(*i).filter(|c| c.is_ascii_digit()) {
                mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                *i += 1;
            }
            count += *i - from;
            *i > from
        };
        let negative = b.get(i) == Some(&b'-');
        if negative {
            i += 1;
        }
        match b.get(i)? {
            b'0' => i += 1, // adds nothing to the mantissa
            b'1'..=b'9' => {
                digits(&mut i);
            }
            _ => return None,
        }
        let mut after = 0;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let from = i;
            if !digits(&mut i) {
                return None;
            }
            after = i - from;
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !digits(&mut i) {
                return None;
            }
        } else if count <= 19 && mantissa <= 1 << 53 && after < EXACT_TENS.len() {
            // Clinger's fast path: both exact as doubles, so one division rounds the
            // value once, to the double the full parse finds.
            self.at = i;
            let x = mantissa as f64 / EXACT_TENS[after];
            // `-0` is an integer, 0 (a +0.0) to Python's json; `-0.0` the float -0.0.
            let integer_zero = after == 0 && mantissa == 0;
            return Some(if negative && !integer_zero { -x } else { x });
        }
        let x: f64 = self.text[start..i].parse().ok()?;
        self.at = i;
        x.is_finite().then_some(x)
    }
}

/// The number the first eight bytes of `b` write, when all eight are digits (the
/// usual word tricks: one test for all eight, three multiplications to sum them).
fn eight_digits(b: &[u8]) -> Option<u64> {
    let word = u64::from_le_bytes(*b.first_chunk::<8>()?);
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    const HIGH_NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    // Each byte is 0x30..=0x39: its high nibble is 3, and adding 6 leaves it so.
    let digits = word & HIGH_NIBBLES == ZEROS
        && word.wrapping_add(0x0606_0606_0606_0606) & HIGH_NIBBLES == ZEROS;
    if !digits {
        return None;
    }
    let mut v = word - ZEROS;
    v = (v * 10 + (v >> 8)) & 0x00FF_00FF_00FF_00FF; // pairs
    v = (v * 100 + (v >> 16)) & 0x0000_FFFF_0000_FFFF; // fours
    Some((v * 10_000 + (v >> 32)) & 0xFFFF_FFFF) // eight
}

/// The powers of ten a double holds exactly.
const EXACT_TENS: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Where the run of plain string bytes from `i` ends: at the next quote or backslash,
/// or `None` if a control byte (never raw in a JSON string) or the end comes first.
#[inline(always)]
fn plain_run(b: &[u8], i: usize) -> Option<usize> {
    // Eight bytes at a time (most strings of a record are short: a vector search, and
    // then a scan for control bytes, cost them more), the last few one by one.
    let rest = b.get(i..)?;
    let mut words = rest.chunks_exact(8);
    let mut at = 0;
    for word in words.by_ref() {
        let stop = stops(u64::from_le_bytes(word.try_into().ok()?));
        if stop != 0 {
            at += (stop.trailing_zeros() / 8) as usize;
            return (rest[at] >= 0x20).then_some(i + at);
        }
        at += 8;
    }
    let tail = words.remainder();
    let k = tail
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
    (tail[k] >= 0x20).then_some(i + at + k)
}

/// The bytes of `word` (little-endian) that end a plain run — a quote, a backslash, a
/// control byte — marked by their high bit. Marks above the first may be wrong (a
/// borrow runs up), the first never is: the lowest one is where the run ends.
fn stops(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\'))) | below_space
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_read_as_json_reads_them() {
        let v = value;
        assert_eq!(v(" null "), Some(Val::Null));
        assert_eq!(v("true"), Some(Val::Bool(true)));
        assert_eq!(v("-0.25e1"), Some(Val::Num(-2.5)));
        assert_eq!(v("1E2"), Some(Val::Num(100.0)));
        assert_eq!(
            v(r#""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00""#),
            Some(Val::Str("a\"\\/\u{8}\u{c}\n\r\té😀".into()))
        );
        assert_eq!(
            v(r#"[ "a" , "b" ]"#),
            Some(Val::Strs(vec!["a".into(), "b".into()]))
        );
        assert_eq!(
            v(r#"{"x": 0.5, "y": "s"}"#),
            Some(Val::Object(vec![
                ("x".into(), Val::Num(0.5)),
                ("y".into(), Val::Str("s".into()))
            ]))
        );
    }

    #[test]
    fn numbers_are_the_doubles_a_full_parse_finds() {
        for t in [
            "0",
            "-0.0",
            "-0e0",
            "0.1",
            "0.30000000000000004",
            "0.6252911686897278",
            "0.23032666742801666",
            "9007199254740992",
            "9007199254740993",
            "-9007199254740993.5",
            "1234567890123456789",
            "12345678901234567890",
            "0.0000000000000000000001",
            "0.00000000000000000000001",
            "1.7976931348623157",
            "12345678",
            "99999999.99999999",
            "-12345678.87654321",
            "2.5e-1",
        ] {
            let want: f64 = t.parse().unwrap();
            let Some(Val::Num(got)) = value(t) else {
                panic!("{t:?} is no number")
            };
            assert_eq!(got.to_bits(), want.to_bits(), "{t:?}");
        }
    }

    #[test]
    fn minus_zero_written_as_an_integer_is_the_zero_python_reads() {
        // Python's json reads `-0` as the integer 0, which is +0.0 as a double.
        let Some(Val::Num(x)) = value("-0") else {
            panic!("-0 is no number")
        };
        assert_eq!(x.to_bits(), 0.0f64.to_bits());
        let Some(Val::Num(x)) = value("-0.0") else {
            panic!("-0.0 is no number")
        };
        assert_eq!(x.to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn what_a_rule_cannot_prove_is_no_value() {
        for t in [
            "",
            "nul",
            "01",
            "1.",
            ".5",
            "-",
            "1e",
            "+1",
            "1e400",
            "0.1234567a",
            "0.12345678a",
            "NaN",
            "[1]",
            "[[]]",
            r#"{"a": {}}"#,
            r#"{"a": []}"#,
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            r#""\x""#,
            r#""\u12""#,
            "\"a\u{1}\"",
            "\"open",
            "[\"a\",]",
            r#"{"a":1,}"#,
            "null x",
            "{\"a\" 1}",
        ] {
            assert_eq!(value(t), None, "{t:?}");
        }
    }

    #[test]
    fn a_carrier_is_an_episode_then_an_op_and_nothing_else() {
        let mut members = Vec::new();
        let op = carrier(
            "{\"episode\":{\"id\":\"a\"},\"op\":\"remember\"}\n",
            |k, v| {
                members.push((k, v));
                Some(())
            },
        )
        .unwrap();
        assert_eq!(
            (members, op),
            (vec![("id".into(), Val::Str("a".into()))], "remember".into())
        );
        assert!(carrier(
            "{\"episode\":{\"id\":\"a\"},\"op\":\"remember\"}",
            |_, _| None
        )
        .is_none());
        for t in [
            "{\"op\":\"remember\",\"episode\":{}}",
            "{\"episode\":{},\"op\":\"remember\",\"x\":1}",
            "{\"episode\":{},\"op\":\"remember\"} {}",
            "{\"episode\":{},\"op\":1}",
            "{\"episode\":{\"a\":{\"b\":{}}},\"op\":\"remember\"}",
        ] {
            assert!(carrier(t, |_, _| Some(())).is_none(), "{t:?}");
        }
    }
}

#[cfg(test)]
mod props {
    //! The reader against serde_json, the oracle: whatever value it reads is the value
    //! serde_json reads, and it reads exactly the values a rule can prove.
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |x| x.is_finite())
                .prop_map(Value::from),
            ".*".prop_map(Value::String),
        ]
    }

    fn json() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-z\"\\\\é]{0,4}", inner), 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// What the reader should make of `v` at the top (`nested`) or inside an object.
    fn expected(v: &Value, nested: bool) -> Option<Val<'static>> {
        Some(match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => Val::Num(n.as_f64()?),
            Value::String(s) => Val::Str(Cow::Owned(s.clone())),
            Value::Array(items) if nested => Val::Strs(
                items
                    .iter()
                    .map(|i| i.as_str().map(|s| Cow::Owned(s.to_owned())))
                    .collect::<Option<_>>()?,
            ),
            Value::Object(m) if nested => Val::Object(
                m.iter()
                    .map(|(k, v)| Some((Cow::Owned(k.clone()), expected(v, false)?)))
                    .collect::<Option<_>>()?,
            ),
            _ => return None,
        })
    }

    /// `text` with every character outside ASCII written as a `\u` escape (a pair past the BMP).
    fn ascii(text: &str) -> String {
        let mut out = String::new();
        for c in text.chars() {
            if c.is_ascii() {
                out.push(c);
            } else {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn the_reader_reads_what_serde_reads(v in json()) {
            let want = expected(&v, true);
            for text in [
                serde_json::to_string(&v).unwrap(),
                serde_json::to_string_pretty(&v).unwrap(),
                ascii(&serde_json::to_string(&v).unwrap()),
            ] {
                prop_assert_eq!(value(&text).map(Val::into_owned), want.clone(), "{}", text);
            }
        }

        #[test]
        fn a_plain_run_ends_where_a_byte_by_byte_scan_ends(
            bytes in prop::collection::vec(
                prop_oneof![
                    1 => Just(b'"'),
                    1 => Just(b'\\'),
                    1 => 0u8..0x20,
                    12 => 0x20u8..=0xff,
                ],
                0..40,
            ),
            from in 0usize..12,
        ) {
            let want = bytes.get(from..).and_then(|rest| {
                let at = rest.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
                (rest[at] >= 0x20).then_some(from + at)
            });
            prop_assert_eq!(plain_run(&bytes, from), want);
        }

        #[test]
        fn arbitrary_text_never_panics_and_reads_only_json(text in ".{0,40}") {
            if let Some(v) = value(&text) {
                let oracle: Value = serde_json::from_str(&text).expect("the reader read what is not JSON");
                prop_assert_eq!(Some(v.into_owned()), expected(&oracle, true));
            }
        }
    }
}
