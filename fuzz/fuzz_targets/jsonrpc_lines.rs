//! JSON-RPC line framing and frame classification, as our stdio transport and the MCP
//! client's read them: `read_capped_line` must split exactly at newlines, drop exactly the
//! lines over the cap, and never depend on how the bytes were buffered; `jsonrpc::parse`
//! must classify every line without panicking.
//!
//! Input: one byte for the cap, one for the buffer size, then the stream.

#![no_main]

use std::io::BufReader;

use iac_code::jsonrpc::{self, LineRead, read_capped_line};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [cap, buffer, stream @ ..] = data else { return };
    let cap = usize::from(*cap) * 4;
    let mut input = BufReader::with_capacity(usize::from(*buffer).max(1), stream);
    let mut lines = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_capped_line(&mut input, &mut line, cap).expect("reading memory never fails") {
            LineRead::Line => {
                assert!(line.len() <= cap && !line.contains(&b'\n'));
                if let Ok(message) = jsonrpc::parse(line.trim_ascii()) {
                    let _ = format!("{message:?}");
                }
                lines.push(Some(line.clone()));
            }
            LineRead::TooLong => {
                assert!(line.is_empty(), "a dropped line leaves nothing behind");
                lines.push(None);
            }
            LineRead::Eof => break,
        }
    }
    // The same lines, split the obvious way.
    let mut expected: Vec<&[u8]> = stream.split(|b| *b == b'\n').collect();
    if stream.is_empty() || stream.ends_with(b"\n") {
        expected.pop();
    }
    let expected: Vec<Option<Vec<u8>>> =
        expected.iter().map(|l| (l.len() <= cap).then(|| l.to_vec())).collect();
    assert_eq!(lines, expected);
});
