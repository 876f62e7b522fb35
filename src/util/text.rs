//! Text rules shared by every printed surface: display width and cutting (the status
//! line, the report's tables), token counts in short and in full form, ages, ANSI
//! colour.

use unicode_width::UnicodeWidthChar;

/// Columns a character takes in a terminal: 0 for controls and combining marks, 2 for
/// East Asian wide characters and wide emoji, 1 for the rest (ambiguous ones such as
/// block characters, arrows and box drawing included).
pub fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
