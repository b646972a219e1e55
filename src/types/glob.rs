//! Redis's glob matcher (`util.c stringmatchlen`), byte for byte: `*`, `?`,
//! `[...]` with ranges and `^` negation, `\` escapes, optional case folding.

/// True if `string` matches `pattern`.
pub fn glob_match(pattern: &[u8], string: &[u8], nocase: bool) -> bool {
    let mut skip_longer = false;
    matchlen(pattern, string, nocase, &mut skip_longer, 0)
}

fn eq(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

/// A line-by-line port of `stringmatchlen_impl`; `pi`/`si` play the C pointers,
/// `p.len() - pi` is `patternLen`. Where C reads the NUL terminator, `at` yields 0.
fn matchlen(p: &[u8], s: &[u8], nocase: bool, skip_longer: &mut bool, nesting: u32) -> bool {
    if nesting > 1000 {
        return false;
    }
    let at = |i: usize| p.get(i).copied().unwrap_or(0);
    let (mut pi, mut si) = (0usize, 0usize);
    while pi < p.len() && si < s.len() {
        match p[pi] {
            b'*' => {
                while pi < p.len() && at(pi + 1) == b'*' {
                    pi += 1;
                }
                if p.len() - pi == 1 {
                    return true;
                }
                while si < s.len() {
                    if matchlen(&p[pi + 1..], &s[si..], nocase, skip_longer, nesting + 1) {
                        return true;
                    }
                    if *skip_longer {
                        return false;
                    }
                    si += 1;
                }
                *skip_longer = true;
                return false;
            }
            b'?' => si += 1,
            b'[' => {
                pi += 1;
                let not = at(pi) == b'^';
                if not {
                    pi += 1;
                }
                let mut matched = false;
                loop {
                    let plen = p.len() - pi;
                    if at(pi) == b'\\' && plen >= 2 {
                        pi += 1;
                        if p[pi] == s[si] {
                            matched = true;
                        }
                    } else if at(pi) == b']' {
                        break;
                    } else if plen == 0 {
                        pi -= 1;
                        break;
                    } else if plen >= 3 && p[pi + 1] == b'-' {
                        let (mut start, mut end, mut c) = (p[pi], p[pi + 2], s[si]);
                        if start > end {
                            std::mem::swap(&mut start, &mut end);
                        }
                        if nocase {
                            start = start.to_ascii_lowercase();
                            end = end.to_ascii_lowercase();
                            c = c.to_ascii_lowercase();
                        }
                        pi += 2;
                        if c >= start && c <= end {
                            matched = true;
                        }
                    } else if eq(p[pi], s[si], nocase) {
                        matched = true;
                    }
                    pi += 1;
                }
                if not {
                    matched = !matched;
                }
                if !matched {
                    return false;
                }
                si += 1;
            }
            c => {
                let mut c = c;
                if c == b'\\' && p.len() - pi >= 2 {
                    pi += 1;
                    c = p[pi];
                }
                if !eq(c, s[si], nocase) {
                    return false;
                }
                si += 1;
            }
        }
        pi += 1;
        if si == s.len() {
            while at(pi) == b'*' && pi < p.len() {
                pi += 1;
            }
            break;
        }
    }
    pi >= p.len() && si == s.len()
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn redis_glob_cases() {
        let m = |p: &str, s: &str| glob_match(p.as_bytes(), s.as_bytes(), false);
        assert!(m("*", "anything"));
        // Redis's matcher never matches an empty string (its loop needs both
        // lengths non-zero); KEYS and SCAN special-case a lone "*" instead.
        assert!(!m("*", ""));
        assert!(m("a*", "a"));
        assert!(m("h?llo", "hello"));
        assert!(!m("h?llo", "hllo"));
        assert!(m("h*llo", "heeeello"));
        assert!(m("h[ae]llo", "hallo"));
        assert!(!m("h[ae]llo", "hillo"));
        assert!(m("h[^e]llo", "hallo"));
        assert!(!m("h[^e]llo", "hello"));
        assert!(m("h[a-b]llo", "hbllo"));
        assert!(m("h[b-a]llo", "hallo"), "reversed ranges work");
        assert!(m("h\\*llo", "h*llo"));
        assert!(!m("h\\*llo", "hello"));
        assert!(m("key:*:x", "key:1:x"));
        assert!(!m("a*b", "a"));
        assert!(m("a**", "a"));
        assert!(glob_match(b"HELLO", b"hello", true));
        assert!(m("a[bc", "ab"), "unterminated class: last char closes it");
        assert!(!m("*[", "x["), "a lone [ never matches");
        assert!(!m("[", "x"));
    }
}
