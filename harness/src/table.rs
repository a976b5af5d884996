//! Plain-text tables for terminal reports (aligned columns, a header rule).

/// A table of string cells with a header row.
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column names.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table { header: header.into_iter().map(Into::into).collect(), rows: Vec::new() }
    }

    /// Appends a row (missing cells print empty, extra cells are kept).
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    fn widths(&self) -> Vec<usize> {
        let columns = self.rows.iter().map(Vec::len).chain([self.header.len()]).max().unwrap_or(0);
        (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .chain([&self.header])
                    .filter_map(|r| r.get(c))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// Renders with two spaces between columns.
    pub fn render(&self) -> String {
        let widths = self.widths();
        let line = |cells: &Vec<String>| {
            let mut out = String::new();
            for (c, width) in widths.iter().enumerate() {
                let cell = cells.get(c).map(String::as_str).unwrap_or("");
                out.push_str(cell);
                if c + 1 < widths.len() {
                    out.push_str(&" ".repeat(width - cell.chars().count() + 2));
                }
            }
            out.trim_end().to_string()
        };
        let mut out = line(&self.header);
        out.push('\n');
        out.push_str(&widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "));
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
            out.push('\n');
        }
        out
    }

    /// Renders as a GitHub Markdown table.
    pub fn render_markdown(&self) -> String {
        let escape = |s: &str| s.replace('|', "\\|");
        let mut out = format!("| {} |\n", self.header.iter().map(|h| escape(h)).collect::<Vec<_>>().join(" | "));
        out.push_str(&format!("|{}\n", " --- |".repeat(self.header.len())));
        for row in &self.rows {
            let cells: Vec<String> =
                (0..self.header.len()).map(|c| escape(row.get(c).map(String::as_str).unwrap_or(""))).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_to_the_widest_cell() {
        let mut t = Table::new(["a", "long header"]);
        t.row(["wide cell", "x"]);
        let text = t.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "a          long header");
        assert_eq!(lines[1], "---------  -----------");
        assert_eq!(lines[2], "wide cell  x");
    }

    #[test]
    fn markdown_escapes_pipes_and_pads_missing_cells() {
        let mut t = Table::new(["k", "v"]);
        t.row(["a|b"]);
        assert_eq!(t.render_markdown(), "| k | v |\n| --- | --- |\n| a\\|b |  |\n");
    }
}
