//! kubectl's human-readable tables (`get`, `api-resources`), read by column.

use std::collections::BTreeMap;

/// A table as kubectl prints it: a header line, then one line per row, cells aligned
/// under their header (kubectl pads columns with at least three spaces).
#[derive(Debug, PartialEq)]
pub(crate) struct Table {
    /// Column names, as printed (`NAME`, `DISPLAY NAME`, ...).
    pub header: Vec<String>,
    /// Cells of each row, one per column; empty when the cell is blank.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Reads `text`; `None` when it has no header line.
    pub(crate) fn parse(text: &str) -> Option<Table> {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header_line = lines.next()?;
        // A column starts where a name starts after two or more spaces (names such as
        // `DISPLAY NAME` hold single spaces).
        let mut starts = vec![0];
        let bytes = header_line.as_bytes();
        for i in 2..bytes.len() {
            if bytes[i] != b' ' && bytes[i - 1] == b' ' && bytes[i - 2] == b' ' {
                starts.push(i);
            }
        }
        let cut = |line: &str| -> Vec<String> {
            (0..starts.len())
                .map(|c| {
                    let end = starts.get(c + 1).copied().unwrap_or(usize::MAX);
                    let cell = line.get(starts[c]..end.min(line.len())).unwrap_or("");
                    cell.trim().to_owned()
                })
                .collect()
        };
        Some(Table {
            header: cut(header_line),
            rows: lines.map(cut).collect(),
        })
    }

    /// The rows whose `column` holds `value`, each as column name -> cell.
    pub(crate) fn rows_where(&self, column: &str, value: &str) -> Vec<BTreeMap<&str, &str>> {
        let Some(index) = self.header.iter().position(|h| h == column) else {
            return Vec::new();
        };
        (self.rows.iter())
            .filter(|row| row[index] == value)
            .map(|row| {
                (self.header.iter().map(String::as_str))
                    .zip(row.iter().map(String::as_str))
                    .collect()
            })
            .collect()
    }

    /// The one row whose `column` holds `value`; `None` unless exactly one does.
    pub(crate) fn row_where(&self, column: &str, value: &str) -> Option<BTreeMap<&str, &str>> {
        let mut rows = self.rows_where(column, value);
        (rows.len() == 1).then(|| rows.remove(0))
    }

    /// The cells of `column`, top to bottom.
    pub(crate) fn column(&self, column: &str) -> Vec<&str> {
        let Some(index) = self.header.iter().position(|h| h == column) else {
            return Vec::new();
        };
        self.rows.iter().map(|row| row[index].as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn reads_cells_under_their_header() {
        let text = "\
NAME         SHORTNAMES   APIVERSION                NAMESPACED   KIND
configmaps   cm           v1                        true         ConfigMap
bindings                  v1                        true         Binding
tenants      tn           platform.example.dev/v1   false        Tenant
";
        let table = Table::parse(text).unwrap();
        assert_eq!(
            table.header,
            ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
        );
        assert_eq!(table.rows[1], ["bindings", "", "v1", "true", "Binding"]);
        let tenants = table.row_where("NAME", "tenants").unwrap();
        assert_eq!(tenants["APIVERSION"], "platform.example.dev/v1");
        assert_eq!(table.column("KIND"), ["ConfigMap", "Binding", "Tenant"]);
    }

    #[test]
    fn keeps_single_spaces_inside_cells() {
        let text = "\
NAME   DISPLAY NAME   MAX WEBAPPS   WEBAPPS   AGE
acme   Acme Corp      5             <none>    3s
";
        let table = Table::parse(text).unwrap();
        assert_eq!(
            table.header,
            ["NAME", "DISPLAY NAME", "MAX WEBAPPS", "WEBAPPS", "AGE"]
        );
        assert_eq!(table.rows[0], ["acme", "Acme Corp", "5", "<none>", "3s"]);
    }
}
