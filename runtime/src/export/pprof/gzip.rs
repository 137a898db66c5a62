//! gzip (RFC 1952) without compression: the data in stored DEFLATE blocks
//! (RFC 1951, `BTYPE=00`), then its CRC-32 and length. Every gzip reader
//! (pprof's, `gzip -d`) reads it; it is about the size of the data, which
//! keeps tickprof free of a compression dependency.

/// The CRC-32 (IEEE, reflected, polynomial 0xEDB88320) table.
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// CRC-32 of `data`, as gzip stores it.
pub(super) fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c = CRC_TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// The largest stored block.
const BLOCK: usize = 0xffff;

/// `data` as a gzip member of stored blocks.
pub(super) fn wrap(data: &[u8]) -> Vec<u8> {
    let blocks = data.len() / BLOCK + 1;
    let mut out = Vec::with_capacity(data.len() + 5 * blocks + 18);
    // ID1 ID2, CM = deflate, no flags, no mtime, no extra flags, OS unknown.
    out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    let mut chunks = data.chunks(BLOCK).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        out.push(u8::from(last));
        let len = chunk.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn stored_blocks_frame_the_data() {
        let empty = wrap(b"");
        assert_eq!(empty.len(), 10 + 5 + 8);
        assert_eq!(&empty[10..15], &[1, 0, 0, 0xff, 0xff]);
        let data: Vec<u8> = (0..BLOCK + 10).map(|i| i as u8).collect();
        let z = wrap(&data);
        assert_eq!(z.len(), 10 + 5 + BLOCK + 5 + 10 + 8);
        assert_eq!(z[10], 0, "first block not final");
        assert_eq!(&z[11..13], &[0xff, 0xff]);
        assert_eq!(z[10 + 5 + BLOCK], 1, "last block final");
        assert_eq!(&z[z.len() - 4..], &((BLOCK + 10) as u32).to_le_bytes());
    }
}
