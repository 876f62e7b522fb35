//! Text rules shared by every printed surface: display width and cutting (the status
//! line, the report's tables), one line out of free text, token counts in short and in
//! full form, ages, ANSI colour, and the one escaping of text from outside baton for a
//! terminal.
//!
//! Text baton did not write (repository files, configs, transcripts, paths, host payload
//! fields, git output) may hold control characters: an OSC 52 that writes the clipboard,
//! an OSC 8 link that opens another address than it shows, `ESC [ 2J`, U+009B (C1 CSI).
//! Wrapped in [`Outside`] (or [`outside_path`]) such text displays with every control
//! character shown as `\u` and four hex digits, the way JSON writes it (`\u001b`,
//! `\u009b`). [`for_terminal`] is the last pass before stdout or stderr: it keeps the
//! newlines of the layout and baton's own colours and shows every other control
//! character the same way, whatever forgot to wrap it.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use unicode_width::UnicodeWidthChar;

/// Columns a character takes in a terminal: 0 for controls and combining marks, 2 for
/// East Asian wide characters and wide emoji, 1 for the rest (ambiguous ones such as
/// block characters, arrows and box drawing included).
pub fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// A relative path as HANDOFF.json and GSD's files spell it: `/` between the names, on
/// Windows too (where the path comes with `\`); on Unix the text as it is.
pub fn slash_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    if cfg!(windows) { text.replace('\\', "/") } else { text.into_owned() }
}

/// Display width of plain text (no escapes), character by character so that [`cut`]
/// agrees with it.
pub fn width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

/// `text` cut to at most `max` columns, ending in `…` when something was cut.
pub fn cut(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_width(c);
        if used + w > max - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out.push('…');
    out
}

/// One line of text out of free text: control characters out, whitespace folded, cut.
pub fn one_line(text: &str, max: usize) -> String {
    let folded: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if folded.chars().count() > max {
        let mut cut: String = folded.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    } else {
        folded
    }
}

/// A token count as people read it: `850`, `1.2k`, `38k`, `1.2M` (whole thousands from
/// 10k on). The form of every figure baton tells: the agent's warnings, the status line,
/// `baton config`.
pub fn short_tokens(tokens: u64) -> String {
    match tokens {
        t if t >= 1_000_000 => format!("{:.1}M", t as f64 / 1_000_000.0),
        t if t >= 10_000 => format!("{}k", (t + 500) / 1000),
        t if t >= 1000 => format!("{:.1}k", t as f64 / 1000.0),
        t => t.to_string(),
    }
}

/// A token count without rounding away a digit that tells two values apart: `150k`,
/// `12.5k`, `1M`, `1.5M`. For chart axes, whose ticks sit a round step apart and must
/// never read the same ([`short_tokens`] gives `13k` for both 12,500 and 13,000).
pub fn short_tokens_exact(n: u64) -> String {
    let (value, unit) = match n {
        n if n >= 1_000_000 => (n as f64 / 1_000_000.0, "M"),
        n if n >= 1_000 => (n as f64 / 1_000.0, "k"),
        n => return n.to_string(),
    };
    if value.fract() == 0.0 { format!("{value:.0}{unit}") } else { format!("{value:.1}{unit}") }
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// How long ago, in words: "just now", "10 min ago", "2 h ago", "9 days ago" (rounded to
/// the nearest unit; a time in the future reads "just now").
pub fn age(seconds: i64) -> String {
    let seconds = seconds.max(0);
    match seconds {
        s if s < 90 => "just now".into(),
        s if s < 90 * 60 => format!("{} min ago", (s + 30) / 60),
        s if s < 36 * 3600 => format!("{} h ago", (s + 1800) / 3600),
        s => format!("{} days ago", (s + 43_200) / 86_400),
    }
}

/// `text` in the ANSI SGR style `code` (`"1"` bold, `"2"` dim, `"33"` yellow,
/// `"1;31"` bold red …), or as it is without colour.
pub fn paint(text: &str, code: &str, colour: bool) -> String {
    if colour { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
}

/// Whether `c` is a control character a terminal may act on: C0 (ESC, BEL, newline …),
/// DEL and C1 (U+0080–U+009F, U+009B among them); or a bidirectional embedding, override
/// or isolate (U+202A–U+202E, U+2066–U+2069), which makes a terminal show text in another
/// order than it is read (a path or a command that looks like another).
fn is_control(c: char) -> bool {
    matches!(c, '\0'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether the UTF-8 sequence at the start of `bytes` encodes a C1 character or a
/// bidirectional control ([`is_control`]'s characters above U+007F).
fn multibyte_control(bytes: &[u8]) -> bool {
    match bytes {
        [0xc2, next, ..] => (0x80..=0x9f).contains(next),
        [0xe2, 0x80, next, ..] => (0xaa..=0xae).contains(next),
        [0xe2, 0x81, next, ..] => (0xa6..=0xa9).contains(next),
        _ => false,
    }
}

/// Whether `bytes` (UTF-8) holds a control character other than those `keep` allows,
/// byte by byte: C1 characters are the two-byte sequences `C2 80`..`C2 9F`, the
/// bidirectional controls three-byte sequences starting `E2`.
fn needs_escaping(bytes: &[u8], keep: impl Fn(u8) -> bool) -> bool {
    bytes.iter().enumerate().any(|(i, &b)| {
        (b < 0x20 && !keep(b)) || b == 0x7f || ((b == 0xc2 || b == 0xe2) && multibyte_control(&bytes[i..]))
    })
}

/// The visible form of control character `c`: `\u` and four hex digits.
fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write;
    let _ = write!(out, "\\u{:04x}", c as u32);
}

/// `text` with every control character (newlines and tabs included) in its visible form.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    escape_controls_but(text, |_| false)
}

/// `text` with every control character but newlines in its visible form: text of several
/// lines (a hook's context, a notice) whose lines are its layout.
pub fn escape_controls_but_newlines(text: &str) -> Cow<'_, str> {
    escape_controls_but(text, |c| c == '\n')
}

fn escape_controls_but(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !needs_escaping(text.as_bytes(), |b| keep(b as char)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_control(c) && !keep(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The longest parameter list of a colour sequence [`for_terminal`] lets through (baton's
/// own are at most `1;31`).
const SGR_PARAMS_MAX: usize = 16;

/// The length of the colour sequence (SGR: `ESC [` digits and `;` then `m`) `text`
/// starts with, if it starts with one.
fn sgr_len(text: &str) -> Option<usize> {
    let rest = text.strip_prefix("\x1b[")?;
    let params = rest.bytes().take_while(|b| b.is_ascii_digit() || *b == b';').count();
    (params <= SGR_PARAMS_MAX && rest.as_bytes().get(params) == Some(&b'm')).then_some(2 + params + 1)
}

/// The last pass of everything baton prints on stdout or stderr: the newlines and colours
/// (SGR sequences) stay, every other control character is shown in its visible form. Safe
/// on JSON too: JSON holds no raw control character but DEL and C1 inside strings, whose
/// visible form is JSON's own escape of them.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    // One pass over the bytes, colours skipped whole: most lines hold nothing to show.
    let Some(first) = first_to_show(text) else { return Cow::Borrowed(text) };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    let mut rest = &text[first..];
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' {
            if let Some(n) = sgr_len(rest) {
                out.push_str(&rest[..n]);
                rest = &rest[n..];
                continue;
            }
        }
        if is_control(c) && c != '\n' {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// Where the first character [`for_terminal`] must show is: a control character other
/// than a newline or the ESC of a colour.
fn first_to_show(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            0x1b => match sgr_len(&text[at..]) {
                Some(n) => at += n,
                None => return Some(at),
            },
            b'\n' => at += 1,
            b if b < 0x20 || b == 0x7f => return Some(at),
            0xc2 | 0xe2 if multibyte_control(&bytes[at..]) => return Some(at),
            _ => at += 1,
        }
    }
    None
}

/// Text from outside baton, for display: its only `Display` is the escaped one
/// ([`escape_controls`]), so it cannot carry a terminal sequence or break a line of the
/// layout wherever it is formatted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outside<'a>(&'a str);

/// `text`, which baton did not write, for display.
pub fn outside(text: &str) -> Outside<'_> {
    Outside(text)
}

impl fmt::Display for Outside<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&escape_controls(self.0))
    }
}

/// A path from outside baton (a project folder, a file a repository names), for display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutsidePath<'a>(&'a Path);

/// `path` for display, escaped like [`Outside`].
pub fn outside_path(path: &Path) -> OutsidePath<'_> {
    OutsidePath(path)
}

impl fmt::Display for OutsidePath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&escape_controls(&self.0.to_string_lossy()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_folds_and_cuts() {
        assert_eq!(one_line("a\n\tb\u{7}  c", 100), "a b c");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }

    #[test]
    fn widths() {
        assert_eq!(width("███████░░░ 72%"), 14);
        assert_eq!(width("+1 ~2 ?3 ↑1 ↓2"), 14);
        assert_eq!(width("⏸ handoff"), 9);
        assert_eq!(width(" │ "), 3);
        assert_eq!(width("日本"), 4);
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(width("a\u{1b}b\u{7}"), 2);
        assert_eq!(width("🚀"), 2);
    }

    #[test]
    fn cutting_keeps_within_the_width() {
        assert_eq!(cut("feat/rate-limit", 12), "feat/rate-l…");
        assert_eq!(cut("short", 12), "short");
        assert_eq!(cut("日本語テキスト", 5), "日本…");
        assert_eq!(cut("abc", 0), "");
        assert_eq!(cut("ab cd", 4), "ab…");
    }

    #[test]
    fn token_counts() {
        assert_eq!(short_tokens(850), "850");
        assert_eq!(short_tokens(1_234), "1.2k");
        assert_eq!(short_tokens(7_000), "7.0k");
        assert_eq!(short_tokens(38_400), "38k");
        assert_eq!(short_tokens(1_000_000), "1.0M");
        assert_eq!(short_tokens(1_200_000), "1.2M");
        assert_eq!(short_tokens_exact(0), "0");
        assert_eq!(short_tokens_exact(150_000), "150k");
        assert_eq!(short_tokens_exact(12_500), "12.5k");
        assert_eq!(short_tokens_exact(1_000_000), "1M");
        assert_eq!(short_tokens_exact(1_500_000), "1.5M");
    }

    #[test]
    fn ages_read_naturally() {
        assert_eq!(age(-5), "just now");
        assert_eq!(age(30), "just now");
        assert_eq!(age(600), "10 min ago");
        assert_eq!(age(7200), "2 h ago");
        assert_eq!(age(9 * 86_400), "9 days ago");
    }

    #[test]
    fn painting() {
        assert_eq!(paint("x", "1;31", true), "\x1b[1;31mx\x1b[0m");
        assert_eq!(paint("x", "1;31", false), "x");
    }

    /// The sequences of issue 32: OSC 52, OSC 8, ESC [ 2J, OSC 0, U+009B.
    const PLANTED: &str = "a\u{1b}]52;c;ZXZpbA==\u{7}b\u{1b}]8;;http://evil.invalid\u{1b}\\c\u{1b}[2Jd\u{1b}]0;title\u{7}e\u{9b}31mf\u{7f}g\u{202e}h\u{2066}i";

    #[test]
    fn outside_text_shows_every_control_character() {
        let shown = outside(PLANTED).to_string();
        assert_eq!(
            shown,
            "a\\u001b]52;c;ZXZpbA==\\u0007b\\u001b]8;;http://evil.invalid\\u001b\\c\\u001b[2Jd\\u001b]0;title\\u0007e\\u009b31mf\\u007fg\\u202eh\\u2066i"
        );
        assert!(!shown.chars().any(is_control));
        assert_eq!(outside("two\nlines\tand a tab").to_string(), "two\\u000alines\\u0009and a tab");
        assert_eq!(outside("日本 é").to_string(), "日本 é");
        assert_eq!(format!("{:<6}|", outside("ab")), "ab    |");
        assert_eq!(outside_path(Path::new("/tmp/x\u{1b}[2J")).to_string(), "/tmp/x\\u001b[2J");
        assert!(matches!(escape_controls("plain"), Cow::Borrowed(_)));
        assert_eq!(escape_controls_but_newlines("a\nb\u{1b}"), "a\nb\\u001b");
    }

    #[test]
    fn the_last_pass_keeps_newlines_and_colours_only() {
        let ours = format!("{}\n{}", paint("72%", "1;31", true), paint("ok", "2", true));
        assert!(matches!(for_terminal(&ours), Cow::Borrowed(_)));
        assert!(matches!(for_terminal("plain\ntext\n"), Cow::Borrowed(_)));
        let mixed = format!("{}{PLANTED}\n", paint("x", "33", true));
        let shown = for_terminal(&mixed);
        assert!(shown.starts_with("\u{1b}[33mx\u{1b}[0ma\\u001b]52;"), "{shown}");
        assert_eq!(shown.matches('\u{1b}').count(), 2, "only the colour's two ESCs: {shown}");
        assert!(!shown.contains('\u{9b}') && !shown.contains('\u{7}') && !shown.contains('\u{7f}'));
        assert!(!shown.contains('\u{202e}') && !shown.contains('\u{2066}'));
        assert_eq!(for_terminal("left \u{2069}right \u{202d}\u{2010}"), "left \\u2069right \\u202d\u{2010}");
        assert!(shown.ends_with('\n'));
        // A colour sequence too long to be baton's, and one cut short, are shown.
        assert_eq!(for_terminal("\u{1b}[1;2;3;4;5;6;7;8;9m"), "\\u001b[1;2;3;4;5;6;7;8;9m");
        assert_eq!(for_terminal("\u{1b}[31"), "\\u001b[31");
        assert_eq!(for_terminal("tab\there"), "tab\\u0009here");
        // JSON stays JSON, and means the same.
        let json = serde_json::json!({"k": "a\u{9b}b\u{7f}\u{1b}"}).to_string();
        let shown = for_terminal(&json);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&shown).unwrap()["k"], "a\u{9b}b\u{7f}\u{1b}");
        assert!(!shown.contains('\u{9b}'));
    }
}
