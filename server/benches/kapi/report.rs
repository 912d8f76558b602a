//! The table: one row per figure, with its unit and, where it has one, its ratio to the
//! machine's own limit measured in the same run.

use serde_json::json;

/// One figure.
pub(crate) struct Row {
    /// What was measured.
    pub name: String,
    /// The figure.
    pub value: f64,
    /// Its unit (`ops/s`, `ms`, `MiB`, `x`, `%`).
    pub unit: &'static str,
}

/// The figures of one run, printed as they come (unless JSON is wanted at the end).
pub(crate) struct Report {
    rows: Vec<Row>,
    json: bool,
}

impl Report {
    /// An empty report; prints rows as they are added unless `json`.
    pub(crate) fn new(json: bool) -> Report {
        if !json {
            println!("{:<72} {:>12} unit", "measurement", "value");
        }
        Report {
            rows: Vec::new(),
            json,
        }
    }

    /// Adds a figure; returns it.
    pub(crate) fn add(&mut self, name: impl Into<String>, value: f64, unit: &'static str) -> f64 {
        let row = Row {
            name: name.into(),
            value,
            unit,
        };
        if !self.json {
            let digits = if value.abs() >= 100.0 || value == 0.0 {
                0
            } else {
                2
            };
            println!("{:<72} {:>12.*} {}", row.name, digits, row.value, row.unit);
        }
        self.rows.push(row);
        value
    }

    /// Adds `value / base` as a percentage.
    pub(crate) fn share(&mut self, name: impl Into<String>, value: f64, base: f64) -> f64 {
        self.add(name, 100.0 * value / base, "%")
    }

    /// Adds `value / base` as a factor.
    pub(crate) fn ratio(&mut self, name: impl Into<String>, value: f64, base: f64) -> f64 {
        self.add(name, value / base, "x")
    }

    /// The figure named `name`, if measured.
    pub(crate) fn get(&self, name: &str) -> Option<f64> {
        (self.rows.iter()).find(|r| r.name == name).map(|r| r.value)
    }

    /// Every figure (read by `tests/bench_quick.rs`, which includes the benchmark).
    #[allow(dead_code)]
    pub(crate) fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// Prints the JSON form when it was asked for.
    pub(crate) fn finish(&self) {
        if self.json {
            let rows: Vec<_> = (self.rows.iter())
                .map(|r| json!({"name": r.name, "value": r.value, "unit": r.unit}))
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&rows).unwrap_or_default()
            );
        }
    }
}
