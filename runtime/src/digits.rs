//! A `u64`'s decimal digits without allocating: for paths built on a
//! thread's set-up (which may run in a signal handler), thread names and
//! the trace log's figures.

/// The decimal digits of a `u64`, kept in place (at most 20).
pub(crate) struct Decimal {
    buf: [u8; 20],
    start: usize,
}

impl Decimal {
    /// The digits of `v` (`"0"` for 0).
    pub(crate) fn new(mut v: u64) -> Decimal {
        let mut buf = [0u8; 20];
        let mut start = buf.len();
        loop {
            start -= 1;
            buf[start] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        Decimal { buf, start }
    }

    /// The digits, as bytes.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// The digits, as text.
    pub(crate) fn as_str(&self) -> &str {
        // ASCII digits: always UTF-8.
        core::str::from_utf8(self.as_bytes()).unwrap_or("?")
    }
}

#[cfg(test)]
mod tests {
    use super::Decimal;

    #[test]
    fn digits_match_the_standard_formatting() {
        let mut v = 1u64;
        let mut cases = vec![0, 9, 10, 99, 100, u64::MAX, u64::MAX - 1];
        while let Some(next) = v.checked_mul(7) {
            cases.push(v);
            cases.push(v - 1);
            v = next + 3;
        }
        for v in cases {
            assert_eq!(Decimal::new(v).as_str(), v.to_string(), "{v}");
            assert_eq!(Decimal::new(v).as_bytes(), v.to_string().as_bytes());
        }
    }
}
