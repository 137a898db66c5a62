//! The few protobuf encodings `profile.proto` needs: varints, and
//! length-delimited fields (strings, nested messages, packed integers).

/// Wire type of varint fields.
const VARINT: u64 = 0;
/// Wire type of length-delimited fields.
const LEN: u64 = 2;

/// A protobuf message being encoded.
#[derive(Default)]
pub(super) struct Message {
    pub(super) buf: Vec<u8>,
}

impl Message {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn key(&mut self, field: u32, wire: u64) {
        self.varint((u64::from(field) << 3) | wire);
    }

    /// A `uint64` / `int64` field (negative `int64`s are ten bytes, as
    /// protobuf says). Zero is skipped: it is the default.
    pub(super) fn uint(&mut self, field: u32, v: u64) {
        if v != 0 {
            self.key(field, VARINT);
            self.varint(v);
        }
    }

    /// A `string` or `bytes` field, also when empty (a repeated string
    /// table keeps its empty first entry).
    pub(super) fn bytes(&mut self, field: u32, b: &[u8]) {
        self.key(field, LEN);
        self.varint(b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// A nested message.
    pub(super) fn message(&mut self, field: u32, m: &Message) {
        self.bytes(field, &m.buf);
    }

    /// A packed repeated `uint64` / `int64` field.
    pub(super) fn packed(&mut self, field: u32, values: impl IntoIterator<Item = u64>) {
        let mut inner = Message::default();
        for v in values {
            inner.varint(v);
        }
        if !inner.buf.is_empty() {
            self.message(field, &inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Message;

    #[test]
    fn encodings_match_the_protobuf_spec() {
        let mut m = Message::default();
        m.uint(1, 150);
        assert_eq!(m.buf, [0x08, 0x96, 0x01]);
        let mut m = Message::default();
        m.bytes(2, b"testing");
        assert_eq!(
            m.buf,
            [0x12, 0x07, b't', b'e', b's', b't', b'i', b'n', b'g']
        );
        let mut m = Message::default();
        m.packed(4, [3, 270, 86942]);
        assert_eq!(m.buf, [0x22, 0x06, 0x03, 0x8E, 0x02, 0x9E, 0xA7, 0x05]);
        let mut m = Message::default();
        m.uint(1, 0);
        m.packed(2, []);
        assert!(m.buf.is_empty());
        m.uint(3, u64::MAX);
        assert_eq!(m.buf.len(), 11);
    }
}
