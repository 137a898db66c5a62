//! The `profile.proto` messages the pprof tests decode (prost), only the
//! fields they read.
#![allow(dead_code)]

#[derive(Clone, PartialEq, prost::Message)]
pub struct Profile {
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    pub period: i64,
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueType {
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(int64, tag = "2")]
    pub str: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Mapping {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(int64, tag = "5")]
    pub filename: i64,
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Location {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Line {
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    #[prost(int64, tag = "2")]
    pub line: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Function {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(int64, tag = "2")]
    pub name: i64,
    #[prost(int64, tag = "4")]
    pub filename: i64,
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}

impl Profile {
    /// The `.pb` export of `report`, decoded.
    pub fn of(report: &tickprof::Report) -> Profile {
        let opts = tickprof::TextOptions::default();
        let pb = tickprof::export::render(report, "x.pb", &opts).unwrap();
        prost::Message::decode(pb.as_slice()).unwrap()
    }

    /// The string at index `i` of the string table.
    pub fn s(&self, i: i64) -> &str {
        &self.string_table[i as usize]
    }

    /// A `.pb.gz` body as tickprof writes it (stored blocks), decoded.
    pub fn from_gz(gz: &[u8]) -> Profile {
        prost::Message::decode(unstore(gz).as_slice()).expect("a profile.proto message")
    }

    /// The sum of sample type `kind`'s values (`("calls", "count")`, say)
    /// over the samples whose leaf function's name ends with `suffix`.
    pub fn leaf_sum(&self, suffix: &str, kind: (&str, &str)) -> i64 {
        let index = self
            .types()
            .iter()
            .position(|t| *t == kind)
            .unwrap_or_else(|| panic!("no sample type {kind:?}"));
        let name = |location: u64| {
            let l = self.location.iter().find(|l| l.id == location)?;
            let f = self
                .function
                .iter()
                .find(|f| f.id == l.line[0].function_id)?;
            Some(self.s(f.name))
        };
        self.sample
            .iter()
            .filter(|s| name(s.location_id[0]).is_some_and(|n| n.ends_with(suffix)))
            .map(|s| s.value[index])
            .sum()
    }

    /// The sample types as (type, unit) names.
    pub fn types(&self) -> Vec<(&str, &str)> {
        self.sample_type
            .iter()
            .map(|t| (self.s(t.r#type), self.s(t.unit)))
            .collect()
    }
}

/// The payload of a gzip member made of stored DEFLATE blocks (what
/// tickprof's `.pb.gz` writer makes), checked block by block.
pub fn unstore(gz: &[u8]) -> Vec<u8> {
    assert_eq!(&gz[..4], &[0x1f, 0x8b, 8, 0]);
    let mut out = Vec::new();
    let mut at = 10;
    loop {
        let last = gz[at] & 1 == 1;
        assert_eq!(gz[at] & 6, 0, "stored block");
        let len = u16::from_le_bytes([gz[at + 1], gz[at + 2]]) as usize;
        out.extend_from_slice(&gz[at + 5..at + 5 + len]);
        at += 5 + len;
        if last {
            break;
        }
    }
    assert_eq!(gz.len(), at + 8);
    assert_eq!(&gz[at + 4..], &(out.len() as u32).to_le_bytes());
    out
}
