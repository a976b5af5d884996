//! Reading compute-sanitizer's `--xml --save FILE` output: one `<record>`
//! per reported error, in report order, under `<ComputeSanitizerOutput>`.
//! The file holds at most `--print-limit` records and no summary; a clean
//! run's file is `<ComputeSanitizerOutput/>`. A file that does not close its
//! root element was cut short (the tool was killed or crashed) and proves
//! nothing, so it is an error here, never "no records".

use serde::{Deserialize, Serialize};

/// One element: its name, its text (concatenated), its child elements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Element {
    /// Tag name.
    pub name: String,
    /// Character data directly inside it, entities decoded, trimmed.
    pub text: String,
    /// Child elements in order.
    pub children: Vec<Element>,
}

impl Element {
    /// The first child named `name`.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The text of the child at `path` (e.g. `["where", "func"]`), if present and non-empty.
    pub fn text_at(&self, path: &[&str]) -> Option<String> {
        let mut at = self;
        for name in path {
            at = at.child(name)?;
        }
        Some(at.text.clone()).filter(|t| !t.is_empty())
    }
}

fn decode_entities(raw: &str) -> Result<String, String> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let semi = after.find(';').ok_or_else(|| format!("unterminated entity near '{}'", clip(after)))?;
        let name = &after[..semi];
        let decoded = match name {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = if let Some(hex) = name.strip_prefix("#x").or_else(|| name.strip_prefix("#X")) {
                    u32::from_str_radix(hex, 16).ok()
                } else if let Some(dec) = name.strip_prefix('#') {
                    dec.parse().ok()
                } else {
                    None
                };
                code.and_then(char::from_u32).ok_or_else(|| format!("unknown entity &{name};"))?
            }
        };
        out.push(decoded);
        rest = &after[semi + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn clip(text: &str) -> String {
    text.chars().take(40).collect()
}

/// Parses a whole XML document into its root element. Attributes are
/// skipped (the sanitizer's records carry none that the harness reads);
/// the declaration, comments and CDATA are handled.
pub fn parse_document(text: &str) -> Result<Element, String> {
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut rest = text;
    loop {
        let Some(lt) = rest.find('<') else {
            if !rest.trim().is_empty() && !stack.is_empty() {
                return Err("text after the last tag".into());
            }
            break;
        };
        let chars = &rest[..lt];
        if let Some(top) = stack.last_mut() {
            top.text.push_str(&decode_entities(chars)?);
        } else if !chars.trim().is_empty() {
            return Err(format!("text outside the root element: '{}'", clip(chars)));
        }
        rest = &rest[lt..];
        if let Some(body) = rest.strip_prefix("<?") {
            let end = body.find("?>").ok_or("unterminated declaration")?;
            rest = &body[end + 2..];
            continue;
        }
        if let Some(body) = rest.strip_prefix("<!--") {
            let end = body.find("-->").ok_or("unterminated comment")?;
            rest = &body[end + 3..];
            continue;
        }
        if let Some(body) = rest.strip_prefix("<![CDATA[") {
            let end = body.find("]]>").ok_or("unterminated CDATA")?;
            stack.last_mut().ok_or("CDATA outside the root element")?.text.push_str(&body[..end]);
            rest = &body[end + 3..];
            continue;
        }
        let gt = rest.find('>').ok_or_else(|| format!("unterminated tag '{}'", clip(rest)))?;
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let name = name.trim();
            let mut done = stack.pop().ok_or_else(|| format!("</{name}> closes nothing"))?;
            if done.name != name {
                return Err(format!("</{name}> closes <{}>", done.name));
            }
            done.text = done.text.trim().to_string();
            attach(&mut stack, &mut root, done)?;
            continue;
        }
        let self_closing = tag.ends_with('/');
        let inner = tag.trim_end_matches('/');
        let name = inner.split_whitespace().next().ok_or("empty tag")?.to_string();
        let element = Element { name, ..Element::default() };
        if self_closing {
            attach(&mut stack, &mut root, element)?;
        } else {
            stack.push(element);
        }
    }
    if let Some(open) = stack.last() {
        return Err(format!("<{}> is never closed (the file was cut short)", open.name));
    }
    root.ok_or_else(|| "no root element".to_string())
}

fn attach(stack: &mut [Element], root: &mut Option<Element>, done: Element) -> Result<(), String> {
    match stack.last_mut() {
        Some(parent) => parent.children.push(done),
        None if root.is_none() => *root = Some(done),
        None => return Err(format!("a second root element <{}>", done.name)),
    }
    Ok(())
}

/// One record of the sanitizer's XML, reduced to what a finding reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct XmlRecord {
    /// `<kind>`: Precise, Api, Leak, Hazard, Analysis, Synccheck, Initcheck, ...
    pub kind: String,
    /// `<level>` when the record has one (many records carry none).
    pub level: Option<String>,
    /// `<what><text>`.
    pub text: String,
    /// Kernel function of `<where>` (for a hazard, of its first access).
    pub function: Option<String>,
    /// Source path of `<where>`.
    pub path: Option<String>,
    /// Source line of `<where>`.
    pub line: Option<u32>,
    /// A hazard's two accesses, as the tool names them: `Write by thread
    /// (32,0,0) at block_reduce.cuh:29` (empty for other records).
    #[serde(default)]
    pub accesses: Vec<String>,
}

impl XmlRecord {
    fn from_element(record: &Element) -> XmlRecord {
        // A hazard names two accesses (`what/thread0/where`, `what/thread1/where`),
        // an analysis a source and a destination; the first one locates it.
        let wheres: [&[&str]; 4] =
            [&["where"], &["what", "thread0", "where"], &["what", "source", "where"], &["what", "thread1", "where"]];
        let located = wheres.iter().find_map(|p| {
            let mut at = record;
            for name in *p {
                at = at.child(name)?;
            }
            Some(at)
        });
        XmlRecord {
            kind: record.text_at(&["kind"]).unwrap_or_else(|| "unknown".into()),
            level: record.text_at(&["level"]),
            text: record.text_at(&["what", "text"]).unwrap_or_default(),
            function: located.and_then(|w| w.text_at(&["func"])),
            path: located.and_then(|w| w.text_at(&["path"])),
            line: located.and_then(|w| w.text_at(&["line"])).and_then(|l| l.parse().ok()),
            accesses: ["thread0", "thread1"]
                .iter()
                .filter_map(|t| record.child("what")?.child(t))
                .map(access)
                .collect(),
        }
    }

    /// `file:line` of the report, the file without its directory.
    pub fn location(&self) -> Option<String> {
        let file = self.path.as_deref()?.rsplit('/').next()?.to_string();
        Some(match self.line {
            Some(line) => format!("{file}:{line}"),
            None => file,
        })
    }
}

/// One access of a hazard (`<thread0>`, `<thread1>`): what it did, which
/// thread, and where.
fn access(thread: &Element) -> String {
    let what = thread.text_at(&["access"]).unwrap_or_else(|| "Access".into());
    let index: Vec<String> =
        ["x", "y", "z"].iter().map(|c| thread.text_at(&["threadIdx", c]).unwrap_or_else(|| "?".into())).collect();
    let place = thread.text_at(&["where", "path"]).map(|p| p.rsplit('/').next().unwrap_or(&p).to_string());
    let line = thread.text_at(&["where", "line"]);
    let at = match (place, line) {
        (Some(p), Some(l)) => format!(" at {p}:{l}"),
        (Some(p), None) => format!(" at {p}"),
        _ => thread.text_at(&["where", "func"]).map(|f| format!(" in {f}")).unwrap_or_default(),
    };
    format!("{what} by thread ({}){at}", index.join(","))
}

/// Parses the sanitizer's XML output into its records, in order.
pub fn parse_records(text: &str) -> Result<Vec<XmlRecord>, String> {
    let root = parse_document(text)?;
    if root.name != "ComputeSanitizerOutput" {
        return Err(format!("root element is <{}>, not <ComputeSanitizerOutput>", root.name));
    }
    Ok(root.children.iter().filter(|c| c.name == "record").map(XmlRecord::from_element).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn testdata(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sanitize/testdata").join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn a_clean_run_has_no_records() {
        for name in ["xml_mem_clean.xml", "xml_race_clean.xml", "xml_init_clean.xml"] {
            assert_eq!(parse_records(&testdata(name)), Ok(vec![]), "{name}");
        }
    }

    #[test]
    fn a_file_cut_short_is_an_error_not_a_clean_run() {
        let text = testdata("xml_memcheck_m6.xml");
        // Cut inside a tag, and cut cleanly after a record (the tool killed between two).
        assert!(parse_records(&text[..text.len() / 2]).is_err());
        let after_record = text.find("</record>").unwrap() + "</record>".len();
        assert!(parse_records(&text[..after_record]).unwrap_err().contains("never closed"));
        assert!(parse_records("").is_err());
        assert!(parse_records("<?xml version=\"1.0\"?>\n<ComputeSanitizerOutput>\n").is_err());
        assert!(parse_records("<Other/>").is_err());
    }

    #[test]
    fn memcheck_records_carry_kind_level_text_and_location() {
        let records = parse_records(&testdata("xml_memcheck_m6.xml")).unwrap();
        assert_eq!(records.len(), 9);
        let first = &records[0];
        assert_eq!(first.kind, "Precise");
        assert_eq!(first.level.as_deref(), Some("Error"));
        assert_eq!(first.text, "Invalid __global__ read of size 8 bytes is out of bounds");
        assert_eq!(first.function.as_deref(), Some("combine_pair"));
        assert_eq!(first.location().as_deref(), Some("reduce.cu:81"));
        assert_eq!(records.iter().filter(|r| r.kind == "Api").count(), 6);
        let leaks: Vec<_> = records.iter().filter(|r| r.kind == "Leak").collect();
        assert_eq!(leaks.len(), 2);
        assert_eq!(leaks[0].text, "Leaked 132 bytes");
    }

    #[test]
    fn hazards_are_located_at_their_first_access() {
        let records = parse_records(&testdata("xml_racecheck_m1.xml")).unwrap();
        assert_eq!(records.len(), 4);
        assert_eq!(records[0].kind, "Hazard");
        assert_eq!(records[0].text, "Potential RAW hazard detected");
        assert_eq!(records[0].location().as_deref(), Some("block_reduce.cuh:29"));
        assert_eq!(records[3].kind, "Analysis");
        assert_eq!(records[3].level.as_deref(), Some("Error"));
        assert_eq!(records[3].function.as_deref(), Some("block_reduce"));
        let sync = parse_records(&testdata("xml_synccheck_m2.xml")).unwrap();
        assert!(sync.iter().all(|r| r.kind == "Synccheck" && r.text == "Barrier error"));
        let init = parse_records(&testdata("xml_initcheck_m8.xml")).unwrap();
        assert_eq!(init[0].location().as_deref(), Some("decoupled_lookback.cuh:91"));
    }

    #[test]
    fn entities_and_cdata_decode() {
        let doc = "<ComputeSanitizerOutput><record><kind>Api</kind><what><text>a &lt;b&gt; &amp; &#65;&#x42;\
                   <![CDATA[<raw>]]></text></what></record></ComputeSanitizerOutput>";
        let records = parse_records(doc).unwrap();
        assert_eq!(records[0].text, "a <b> & AB<raw>");
        assert!(parse_records("<ComputeSanitizerOutput>&bogus;</ComputeSanitizerOutput>").is_err());
        assert!(parse_records("<a></b>").is_err());
    }
}
