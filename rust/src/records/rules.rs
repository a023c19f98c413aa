//! What the core can prove of one value under its rule.
//!
//! Each check answers "is this value valid *and already in the form the validator
//! would leave it in*?" It says yes only when it is sure: text is judged character by
//! character only over ASCII and a set of long-assigned letters and digits (whose
//! whitespace, printability and case every Unicode version agrees on); anything else
//! is "not proven", and the record goes to the full validator.

use super::schema::Rule;
use super::value::Val;

/// Python's whitespace among ASCII characters (`str.isspace`, `str.split`, `str.strip`).
pub(super) fn ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | 0x1c..=0x1f)
}

/// A letter or digit outside ASCII that every Unicode version since long ago assigns
/// (Latin-1 and Latin Extended, Greek, Cyrillic, kana, CJK ideographs, Hangul): never
/// whitespace, always printable.
pub(super) fn plain_nonascii(c: char) -> bool {
    let u = c as u32;
    let old = matches!(u, 0x00C0..=0x024F | 0x0370..=0x03FF | 0x0400..=0x052F | 0x3041..=0x3096 | 0x30A1..=0x30FA | 0x4E00..=0x9FEF | 0xAC00..=0xD7A3);
    old && c != '\u{00D7}' && c != '\u{00F7}' && c.is_alphanumeric()
}

/// A character that is surely printable and not whitespace.
fn plain(c: char) -> bool {
    if c.is_ascii() {
        (0x21..=0x7e).contains(&(c as u8))
    } else {
        plain_nonascii(c)
    }
}

/// A character that is surely printable (a plain one, or the ASCII space).
fn printable(c: char) -> bool {
    c == ' ' || plain(c)
}

/// Non-blank text (`text(value)`): some character is surely not whitespace.
pub(super) fn non_blank(s: &str) -> bool {
    s.chars().any(plain)
}

/// Text that `.strip()` leaves as it is and that is not blank.
pub(super) fn stripped(s: &str) -> bool {
    match (s.chars().next(), s.chars().next_back()) {
        (Some(first), Some(last)) => plain(first) && plain(last),
        _ => false,
    }
}

/// A label: stripped, 1 to `max` characters, every one printable.
fn label(s: &str, max: usize) -> bool {
    stripped(s) && s.chars().count() <= max && s.chars().all(printable)
}

/// An id: `[A-Za-z0-9._:-]`, 1 to `max` characters, no leading dot.
pub(super) fn id(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && !s.starts_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

fn slug(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// A finite number in [0, 1] (JSON has no booleans among its numbers).
pub(super) fn unit(v: &Val<'_>) -> Option<f64> {
    let Val::Num(x) = *v else { return None };
    (x.is_finite() && (0.0..=1.0).contains(&x)).then_some(x)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's civil algorithm).
pub(super) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn digits(b: &[u8]) -> Option<i64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0i64, |n, &d| n * 10 + i64::from(d - b'0')))
}

/// `YYYY-MM-DD`, a real date of years 1-9999: days since 1970-01-01.
pub(super) fn date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(&b[0..4])?, digits(&b[5..7])?, digits(&b[8..10])?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if y < 1 || !(1..=12).contains(&m) || d < 1 || d > month_days[(m - 1) as usize] {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

/// An instant as cuemem writes one (`datetime.isoformat()` of a UTC time:
/// `YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00`, the fraction only when not zero):
/// microseconds since the epoch.
pub(super) fn instant(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let (body, fraction) = match b.len() {
        25 => (b, 0),
        32 if b[19] == b'.' => {
            let f = digits(&b[20..26])?;
            (b, if f == 0 { return None } else { f })
        }
        _ => return None,
    };
    if body[10] != b'T'
        || body[13] != b':'
        || body[16] != b':'
        || &body[body.len() - 6..] != b"+00:00"
    {
        return None;
    }
    let day = date(std::str::from_utf8(&body[..10]).ok()?)?;
    let (h, mi, sec) = (
        digits(&body[11..13])?,
        digits(&body[14..16])?,
        digits(&body[17..19])?,
    );
    if h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    Some(((day * 86_400 + h * 3600 + mi * 60 + sec) * 1_000_000) + fraction)
}

/// Whether `v` is, under `rule`, valid and in the form validation leaves it in.
/// (`Salience` and `Metadata` are the decoder's own: it needs their contents.)
pub(super) fn proves(rule: &Rule, v: &Val<'_>) -> bool {
    match (rule, v) {
        (Rule::Id { max }, Val::Str(s)) | (Rule::OptionalId { max }, Val::Str(s)) => id(s, *max),
        (Rule::OptionalId { .. } | Rule::OptionalText | Rule::Label { .. }, Val::Null) => true,
        (Rule::Slug { max }, Val::Str(s)) => slug(s, *max),
        (Rule::Text, Val::Str(s)) => non_blank(s),
        (Rule::OptionalText, Val::Str(s)) => stripped(s),
        (Rule::Label { max }, Val::Str(s)) => label(s, *max),
        (Rule::Unit, v) => unit(v).is_some(),
        (Rule::Flag, Val::Bool(_)) => true,
        (Rule::Choice { optional: true, .. }, Val::Null) => true,
        (Rule::Choice { values, .. }, Val::Str(s)) => values.iter().any(|c| c == s),
        (Rule::Date, Val::Str(s)) => date(s).is_some(),
        (Rule::Instant { optional: true }, Val::Null) => true,
        (Rule::Instant { .. }, Val::Str(s)) => instant(s).is_some(),
        (Rule::Texts, Val::Strs(items)) => distinct(items, stripped),
        (Rule::Ids { max }, Val::Strs(items)) => distinct(items, |s| id(s, *max)),
        _ => false,
    }
}

/// Up to this many values in a list, a repeat is looked for among the values before it;
/// past it, in a set (a list of many thousands stays linear).
pub(super) const FEW_VALUES: usize = 16;

/// Every item passing `each`, none repeated (a long list's repeats looked up in a set).
fn distinct(items: &[std::borrow::Cow<'_, str>], each: impl Fn(&str) -> bool) -> bool {
    if !items.iter().all(|s| each(s)) {
        return false;
    }
    if items.len() <= FEW_VALUES {
        return items
            .iter()
            .enumerate()
            .all(|(i, s)| !items[..i].contains(s));
    }
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    items.iter().all(|s| seen.insert(s.as_ref()))
}

/// A cue value as a folded dimension holds it (`" ".join(v.casefold().split()) or v`),
/// or `None` when the core cannot be sure of the fold (a cased letter outside ASCII).
#[cfg(test)]
pub(super) fn fold(s: &str) -> Option<String> {
    let mut out = String::new();
    fold_into(s, &mut out).map(|()| out)
}

/// The fold of a cue value (`" ".join(v.casefold().split()) or v`) appended to `out`, or
/// `None` (with `out` left as it was) when the core cannot be sure of it.
pub(super) fn fold_into(s: &str, out: &mut String) -> Option<()> {
    let at = out.len();
    let mut pending_space = false;
    for c in s.chars() {
        if c.is_ascii() {
            if ascii_space(c as u8) {
                pending_space = out.len() > at;
                continue;
            }
            if !(0x20..=0x7e).contains(&(c as u8)) {
                out.truncate(at);
                return None; // a control character: Python's split may see more
            }
        } else if !(plain_nonascii(c) && uncased(c)) {
            out.truncate(at);
            return None;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c.to_ascii_lowercase());
    }
    if out.len() == at {
        out.push_str(s);
    }
    Some(())
}

fn uncased(c: char) -> bool {
    let mut lower = c.to_lowercase();
    let mut upper = c.to_uppercase();
    lower.next() == Some(c)
        && lower.next().is_none()
        && upper.next() == Some(c)
        && upper.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    #[test]
    fn civil_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(1, 1, 1), -719_162);
        assert_eq!(date("2026-06-07"), Some(days_from_civil(2026, 6, 7)));
        assert_eq!(date("2026-02-29"), None);
        assert_eq!(date("0000-01-01"), None);
    }

    #[test]
    fn instants_in_canonical_form_only() {
        assert_eq!(instant("1970-01-01T00:00:01+00:00"), Some(1_000_000));
        assert_eq!(instant("1970-01-01T00:00:00.000001+00:00"), Some(1));
        assert_eq!(instant("1970-01-01T00:00:00.000000+00:00"), None);
        assert_eq!(instant("1970-01-01T00:00:00Z"), None);
        assert_eq!(instant("1970-01-01 00:00:00+00:00"), None);
        assert_eq!(instant("1970-01-01T24:00:00+00:00"), None);
    }

    #[test]
    fn folds_what_it_is_sure_of() {
        assert_eq!(fold("Acme  Corp").as_deref(), Some("acme corp"));
        assert_eq!(fold(" a\tb ").as_deref(), Some("a b"));
        assert_eq!(fold("山田").as_deref(), Some("山田"));
        assert_eq!(fold("Straße"), None);
        assert_eq!(fold("É"), None);
        assert_eq!(fold("a\u{1}b"), None);
    }

    #[test]
    fn text_checks() {
        assert!(non_blank(" x "));
        assert!(!non_blank(" \u{3000} "));
        assert!(stripped("会議"));
        assert!(!stripped(" a"));
        assert!(!stripped("a\u{3000}"));
        assert!(label("a b", 3) && !label("a b", 2) && !label("a\u{7}b", 5));
        assert!(id("ep-1.x:y", 128) && !id(".x", 128) && !id("a/b", 128) && !id("", 128));
    }

    #[test]
    fn a_list_repeats_no_item_however_long() {
        let list = |n: usize, last: &str| {
            let mut items: Vec<Cow<'_, str>> =
                (0..n).map(|i| Cow::Owned(format!("t{i}"))).collect();
            items.push(Cow::Owned(last.to_owned()));
            Val::Strs(items)
        };
        for n in [3, 200] {
            assert!(proves(&Rule::Texts, &list(n, "fresh")), "{n}");
            assert!(!proves(&Rule::Texts, &list(n, "t1")), "{n}");
            assert!(!proves(&Rule::Texts, &list(n, " t1")), "{n}");
            assert!(!proves(&Rule::Ids { max: 128 }, &list(n, "t0")), "{n}");
        }
    }
}
