//! `iac-code sessions import`: any input is either refused with a usage error or read as a
//! metadata line and journal records, which then load like a journal.
//!
//! Input: what would come on stdin.

#![no_main]

use iac_code::fuzzing::read_export;
use iac_code::session::record::Rebuilt;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok((meta, records)) = read_export(data) else { return };
    assert!(!meta.session_id.is_empty());
    let mut rebuilt = Rebuilt::default();
    for (n, record) in records.iter().enumerate() {
        assert!(!record.contains(&b'\n'), "one record per line");
        rebuilt.apply_line(record, &n);
    }
    rebuilt.mend();
    let _ = rebuilt.repairs();
});
