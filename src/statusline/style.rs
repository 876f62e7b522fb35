//! ANSI styling, off when colour is not wanted.

/// How a segment is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Dim,
    Bold,
    Branch,
    /// The git markers.
    Git,
    /// The current task.
    Task,
    Normal,
    Warning,
    Critical,
}

fn code(style: Style) -> Option<&'static str> {
    match style {
        Style::Dim => Some("2"),
        Style::Bold => Some("1"),
        Style::Branch => Some("35"),
        Style::Git => Some("36"),
        Style::Task => Some("34"),
        Style::Normal => Some("32"),
        Style::Warning => Some("33"),
        Style::Critical => Some("1;31"),
    }
}

/// `text` wrapped in the style's escape codes, or as it is without colour.
pub fn paint(text: &str, style: Style, colour: bool) -> String {
    match code(style) {
        Some(code) => crate::util::text::paint(text, code, colour),
        None => text.to_string(),
    }
}
