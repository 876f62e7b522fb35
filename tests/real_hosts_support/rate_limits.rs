//! What makes Claude Code 2.1.332 fill `rate_limits` in its statusline payload against the
//! stand-in server (read in its bundle): it keeps the `anthropic-ratelimit-unified-<5h|7d>-
//! {utilization,reset}` response headers only for a claude.ai subscriber or a gateway
//! login, and a gateway login is, among others, an `ANTHROPIC_AUTH_TOKEN` whose JWT payload
//! has `aud: "claude-gateway"` with `ANTHROPIC_BASE_URL` on a host that is not Anthropic's
//! (the signature is not checked on the client). The payload then carries
//! `rate_limits.five_hour.used_percentage` (utilization × 100) and `resets_at` (Unix s).

/// An unsigned JWT Claude Code reads as a gateway login (`aud: claude-gateway`).
pub fn gateway_token() -> String {
    let header = base64url(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = base64url(br#"{"aud":"claude-gateway","sub":"baton-e2e","exp":4102444800}"#);
    format!("{header}.{payload}.c3RhbmQtaW4")
}

/// The unified rate-limit headers: `five_hour` and `seven_day` used (0 to 1) and their
/// resets (Unix seconds).
pub fn headers(five_hour: f64, five_reset: i64, seven_day: f64, seven_reset: i64) -> Vec<(String, String)> {
    [
        ("anthropic-ratelimit-unified-status", "allowed".to_string()),
        ("anthropic-ratelimit-unified-5h-status", "allowed".to_string()),
        ("anthropic-ratelimit-unified-5h-utilization", five_hour.to_string()),
        ("anthropic-ratelimit-unified-5h-reset", five_reset.to_string()),
        ("anthropic-ratelimit-unified-7d-status", "allowed".to_string()),
        ("anthropic-ratelimit-unified-7d-utilization", seven_day.to_string()),
        ("anthropic-ratelimit-unified-7d-reset", seven_reset.to_string()),
        ("anthropic-ratelimit-unified-representative-claim", "five_hour".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64url_without_padding() {
        assert_eq!(super::base64url(b"hi"), "aGk");
        assert_eq!(super::base64url(b"abc"), "YWJj");
        assert_eq!(super::base64url(b"?>"), "Pz4");
    }
}
