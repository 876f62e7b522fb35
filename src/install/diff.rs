//! A unified line diff, for `--dry-run`: what would change in a settings file, shown the
//! way `diff -u` and git show it. Settings files are small; a longest-common-subsequence
//! table is plenty. Past a size limit the whole old and new text is shown instead.

const CONTEXT: usize = 3;
/// Above this many table cells, show the old and new text whole.
const TABLE_LIMIT: usize = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Removed,
    Added,
}

/// The edit script from `old` to `new`: each line with what happens to it.
fn edits<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<(Op, &'a str)> {
    let (n, m) = (old.len(), new.len());
    if n.saturating_mul(m) > TABLE_LIMIT {
        let mut out: Vec<(Op, &str)> = old.iter().map(|l| (Op::Removed, *l)).collect();
        out.extend(new.iter().map(|l| (Op::Added, *l)));
        return out;
    }
    // lcs[i][j]: length of the longest common subsequence of old[i..] and new[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] =
                if old[i] == new[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            out.push((Op::Same, old[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push((Op::Removed, old[i]));
            i += 1;
        } else {
            out.push((Op::Added, new[j]));
            j += 1;
        }
    }
    out
}

/// A unified diff of `old` and `new` with the given file labels; empty when they are
/// the same.
pub fn unified(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    if old == new {
        return String::new();
    }
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    let script = edits(&old_lines, &new_lines);
    let mut out = format!("--- {old_label}\n+++ {new_label}\n");

    // Group changes into hunks with CONTEXT lines around them.
    let changed: Vec<usize> =
        script.iter().enumerate().filter(|(_, (op, _))| *op != Op::Same).map(|(k, _)| k).collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 2 * CONTEXT + 1 {
            end = changed[k];
            k += 1;
        }
        let end = (end + CONTEXT + 1).min(script.len());
        // Line numbers of the hunk's first line in each file.
        let old_start = script[..start].iter().filter(|(op, _)| *op != Op::Added).count();
        let new_start = script[..start].iter().filter(|(op, _)| *op != Op::Removed).count();
        let old_count = script[start..end].iter().filter(|(op, _)| *op != Op::Added).count();
        let new_count = script[start..end].iter().filter(|(op, _)| *op != Op::Removed).count();
        let first = |start: usize, count: usize| if count == 0 { start } else { start + 1 };
        out.push_str(&format!(
            "@@ -{},{old_count} +{},{new_count} @@\n",
            first(old_start, old_count),
            first(new_start, new_count)
        ));
        for (op, line) in &script[start..end] {
            let mark = match op {
                Op::Same => ' ',
                Op::Removed => '-',
                Op::Added => '+',
            };
            out.push(mark);
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_has_no_diff() {
        assert_eq!(unified("a\nb\n", "a\nb\n", "x", "y"), "");
    }

    #[test]
    fn shows_changes_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n";
        let diff = unified(old, new, "a/s.json", "b/s.json");
        assert_eq!(
            diff,
            "--- a/s.json\n+++ b/s.json\n@@ -2,9 +2,10 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n+11\n"
        );
    }

    #[test]
    fn far_apart_changes_make_two_hunks() {
        let old: String = (1..=30).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=30)
            .map(|i| match i {
                2 => "two\n".to_string(),
                28 => "twenty-eight\n".to_string(),
                _ => format!("{i}\n"),
            })
            .collect();
        let diff = unified(&old, &new, "a", "b");
        assert_eq!(diff.matches("@@ -").count(), 2, "{diff}");
        assert!(diff.contains("-2\n+two\n"));
        assert!(diff.contains("-28\n+twenty-eight\n"));
    }

    #[test]
    fn a_new_file_is_all_additions() {
        let diff = unified("", "{\n}\n", "/dev/null", "b");
        assert_eq!(diff, "--- /dev/null\n+++ b\n@@ -0,0 +1,2 @@\n+{\n+}\n");
    }
}
